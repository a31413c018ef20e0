import type { Session } from "../../sessions/index.ts";
import type { ApiClient } from "../client.ts";
import { followEvents } from "../events.ts";
import { printLine } from "../output.ts";
import { resolveSession, sessionPath } from "../resolve.ts";
import { sessionVerb } from "../session-verb.ts";

/** How long `ag interrupt` waits for the turn to stop before saying it still runs. */
const STOP_WAIT_MS = 10_000;

/**
 * `ag interrupt` (Ctrl+C: stop the agent's turn) and `ag escape` (Escape: close a menu or dialog).
 * The key is pressed at once; the route answers the session as it was then (still working), so
 * `interrupt` follows the session's events until its state moves on and reports that one.
 */
function keyCommand(
  name: "interrupt" | "escape",
  description: string,
  done: (s: Session) => string,
  settle?: (client: ApiClient, id: string, press: () => Promise<Session>) => Promise<Session>,
) {
  return sessionVerb({
    name,
    description,
    json: "Machine-readable output: the session afterwards",
    async act(client, given) {
      const session = await resolveSession(client, given);
      const press = () => client.send<Session>("POST", sessionPath(session.id, name));
      const after = settle ? await settle(client, session.id, press) : await press();
      const still = name === "interrupt" && after.status === "working";
      const line = still
        ? `interrupt sent to ${after.name}; it is still working after ${STOP_WAIT_MS / 1000} s (ag read ${after.id.slice(0, 8)} shows what it does)`
        : `${done(after)} (now ${after.status})`;
      return { json: after, print: () => printLine(line) };
    },
  });
}

/**
 * Presses once the session's event stream is open (no change can slip in between), then waits
 * for a state other than working — the turn's end — up to STOP_WAIT_MS, and answers the session
 * as it is then.
 */
async function untilStopped(client: ApiClient, id: string, press: () => Promise<Session>): Promise<Session> {
  const stop = new AbortController();
  const timer = setTimeout(() => stop.abort(), STOP_WAIT_MS);
  let failure: unknown = null;
  try {
    await followEvents(client, `${sessionPath(id)}/events`, {
      signal: stop.signal,
      onOpen() {
        press().then(
          (now) => now.status !== "working" && stop.abort(),
          (error) => {
            failure = error;
            stop.abort();
          },
        );
      },
      onEvent: (event) =>
        event.event === "session.turn_ended" ||
        event.event === "session.ended" ||
        (event.event.startsWith("status.") && event.event !== "status.working"),
    });
  } finally {
    clearTimeout(timer);
  }
  if (failure) throw failure;
  return client.get<Session>(sessionPath(id));
}

export const interruptCommand = keyCommand(
  "interrupt",
  "Stop the session's current turn (Ctrl+C in the agent); says its state once the turn stopped",
  (s) => `interrupted ${s.name}`,
  untilStopped,
);
export const escapeCommand = keyCommand(
  "escape",
  "Press Escape in the session (closes a menu or dialog)",
  (s) => `pressed Escape in ${s.name}`,
);
