import type { PendingPermission, SessionStatus } from "../sessions/index.ts";
import type { StreamedEvent } from "./events.ts";
import { answerHint, pendingSummary } from "./views.ts";

/**
 * What `ag run` makes of one session's events while its turn runs: the assistant's text to
 * print, the prompts it waits on, and when to stop. Pure, so it is tested without an agent.
 *
 * The server says when a turn ends (`session.turn_ended`): the stream is opened before the
 * session is created, so the first turn end of the session is the end of our prompt's turn
 * (a new session has had no turn before it; a reused one was idle). `message.*` events come
 * from the transcript and may lag behind, so they never decide anything.
 */
export type TurnEnd = "turn" | "ended" | "failed";

export interface TurnStep {
  print?: string;
  /** How to answer a prompt, for a person who cannot be asked right here (no terminal). */
  note?: string;
  end?: TurnEnd;
  /** A prompt the session now waits on: a permission, a plan or a question. */
  ask?: PendingPermission;
  /** The session's pending prompt as a change of its state tells it (null: none any more). */
  pending?: PendingPermission | null;
}

export interface TurnFollower {
  step(event: StreamedEvent): TurnStep;
  /** Assistant text printed so far. */
  printed(): number;
}

const ASKING_EVENTS = new Set(["status.permission", "status.plan", "status.question"]);

export function createTurnFollower(sessionId: string): TurnFollower {
  let printed = 0;
  const handle = sessionId.slice(0, 8);
  return {
    printed: () => printed,
    step(event) {
      if (event.session?.id !== sessionId) return {};
      const meta = event.meta as { status?: SessionStatus; pendingPermission?: PendingPermission | null };
      const pending = meta.status === undefined ? undefined : (meta.pendingPermission ?? null);
      if (ASKING_EVENTS.has(event.event) && pending) {
        const what =
          pending.kind === "question"
            ? `the agent asks: ${pendingSummary(pending)}`
            : pending.kind === "plan"
              ? "the agent proposes a plan"
              : `waiting for permission: ${pendingSummary(pending)}`;
        return { ask: pending, pending, note: `${what} (${answerHint(pending, handle)})` };
      }
      switch (event.event) {
        case "message.assistant":
          printed++;
          return { print: event.detail };
        case "session.turn_ended":
          return { end: "turn", pending };
        case "session.ended":
          return { end: event.meta.reason === "failed" ? "failed" : "ended", pending: null };
        default:
          return pending === undefined ? {} : { pending };
      }
    },
  };
}
