import type { StreamedEvent } from "./events.ts";

/**
 * What `ag run` makes of one session's events while its turn runs: the assistant's text to
 * print, notes for the person, and when to stop. Pure, so it is tested without an agent.
 *
 * The server says when a turn ends (`session.turn_ended`): the stream is opened before the
 * session is created, so the first turn end of the session is the end of our prompt's turn
 * (a new session has had no turn before it; a reused one was idle). `message.*` events come
 * from the transcript and may lag behind, so they never decide anything.
 */
export type TurnEnd = "turn" | "ended" | "failed";

export interface TurnStep {
  print?: string;
  note?: string;
  end?: TurnEnd;
}

export interface TurnFollower {
  step(event: StreamedEvent): TurnStep;
  /** Assistant text printed so far. */
  printed(): number;
}

export function createTurnFollower(sessionId: string): TurnFollower {
  let printed = 0;
  const at = `/v1/sessions/${sessionId}`;
  return {
    printed: () => printed,
    step(event) {
      if (event.session?.id !== sessionId) return {};
      switch (event.event) {
        case "message.assistant":
          printed++;
          return { print: event.detail };
        case "status.permission":
          return { note: `waiting for permission: ${event.detail} (POST ${at}/approve or ${at}/reject)` };
        case "status.plan":
          return { note: `the agent proposes a plan: POST ${at}/approve or ${at}/reject` };
        case "status.question":
          return {
            note: `the agent asks: ${event.detail} (POST ${at}/answer {"option": N} or {"text": "…"})`,
          };
        case "session.turn_ended":
          return { end: "turn" };
        case "session.ended":
          return { end: event.meta.reason === "failed" ? "failed" : "ended" };
        default:
          return {};
      }
    },
  };
}
