import type { Consensus } from "../consensus/consensus.ts";
import { AgError } from "../shared/errors.ts";
import type { ApiClient } from "./client.ts";
import { followEvents } from "./events.ts";
import { printNote, startSpinner } from "./output.ts";
import { abortOnInterrupt } from "./signals.ts";

/** A consensus review from the command line: naming one, and waiting for its verdict. */

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export const consensusPath = (id: string) => `/v1/consensus/${encodeURIComponent(id)}`;

/** A review's id from its whole id or a unique start of it (as `ag review --no-wait` shows). */
export async function resolveReview(client: ApiClient, given: string): Promise<string> {
  const wanted = given.trim().toLowerCase();
  if (wanted === "") throw new AgError("USAGE_ERROR", "name a review: its id, or the start of its id");
  if (UUID.test(wanted)) return wanted;
  const matching = (await client.get<Consensus[]>("/v1/consensus")).filter((c) =>
    c.id.toLowerCase().startsWith(wanted),
  );
  if (matching.length === 1) return matching[0]!.id;
  if (matching.length > 1) {
    const list = matching.map((c) => `${c.id.slice(0, 13)} (${c.status}, ${c.createdAt})`).join(", ");
    throw new AgError(
      "USAGE_ERROR",
      `${given} is the start of ${matching.length} review ids: ${list}; give more of the id`,
    );
  }
  throw new AgError("CONSENSUS_NOT_FOUND", `no review ${given} (not an id or the start of one)`);
}

/**
 * The review once it has ended, or as it is when Ctrl+C stopped the wait. Follows the server's
 * event stream for its `consensus.completed`; each time the stream opens (the server then holds
 * our subscription, so an end after that arrives as an event) the record is read once, in case
 * the review ended before. Reconnects as `ag tail` does; the review has its own time limit on
 * the server (each reviewer's `consensusTimeoutMs`), so the wait ends.
 */
export async function waitForReview(client: ApiClient, id: string, waiting: string): Promise<Consensus> {
  const interrupt = abortOnInterrupt();
  const stop = new AbortController();
  const signal = AbortSignal.any([interrupt.signal, stop.signal]);
  let ended: Consensus | null = null;
  let failure: unknown = null;
  const spinner = startSpinner(waiting);
  try {
    await followEvents(client, "/v1/events", {
      signal,
      onOpen() {
        client.get<Consensus>(consensusPath(id)).then(
          (review) => {
            if (review.status === "running") return;
            ended = review;
            stop.abort();
          },
          (error) => {
            failure = error;
            stop.abort();
          },
        );
      },
      onEvent: (event) => event.event === "consensus.completed" && event.meta.consensusId === id,
      onReconnect: (why) => printNote(`reconnecting to the event stream: ${why}`),
    });
  } finally {
    spinner.stop();
    interrupt.release();
  }
  if (failure) throw failure;
  if (interrupt.interrupted() && !ended) printNote("stopped waiting; the review goes on");
  return ended ?? (await client.get<Consensus>(consensusPath(id)));
}
