import type { StreamedEvent } from "./events.ts";

/**
 * What `ag run` makes of one session's events while its turn runs: the assistant's text to
 * print, notes for the person, and when to stop. Pure, so it is tested without an agent.
 *
 * Creation answers only once the agent has taken the prompt, and an agent is idle before it
 * takes one (a new session once its UI is up, a reused one between turns). So every idle that
 * reaches us before that answer belongs to the time before the prompt, and the first idle after
 * it ends the turn. Status events are published in order; `message.*` events come from the
 * transcript and may lag behind them, so they never decide anything.
 */
export type TurnEnd = "turn" | "ended" | "failed";

export interface TurnStep {
  print?: string;
  note?: string;
  end?: TurnEnd;
}

export interface TurnFollower {
  /** Creation has answered: the agent has the prompt, so the next idle ends the turn. */
  delivered(): void;
  step(event: StreamedEvent): TurnStep;
  /** Assistant text printed so far. */
  printed(): number;
}

export function createTurnFollower(sessionId: string): TurnFollower {
  let delivered = false;
  let printed = 0;
  return {
    delivered() {
      delivered = true;
    },
    printed: () => printed,
    step(event) {
      if (event.session?.id !== sessionId) return {};
      switch (event.event) {
        case "message.assistant":
          printed++;
          return { print: event.detail };
        case "status.permission":
          return { note: `waiting for permission: ${event.detail} (approve or reject it in the dashboard)` };
        case "status.plan":
          return { note: "the agent proposes a plan: approve or reject it in the dashboard" };
        case "status.question":
          return { note: `the agent asks a question: answer it in the dashboard (${event.detail})` };
        case "session.idle":
        case "status.idle":
          return delivered ? { end: "turn" } : {};
        case "session.ended":
          return { end: event.meta.reason === "failed" ? "failed" : "ended" };
        default:
          return {};
      }
    },
  };
}
