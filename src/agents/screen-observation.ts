import type { AgentObservation } from "./agent.ts";

/** What every agent's classified screen may be, whatever dialogs of its own it tells apart. */
interface ClassifiedScreen {
  state: string;
  interrupted?: boolean;
  /** Idle on the agent's start screen, before any conversation. */
  home?: boolean;
  /** An API error the idle screen shows (the turn ended on it). */
  apiError?: string | null;
  exitStatus?: number | null;
}

/**
 * The state fusion's reading of the states every agent's screen has: idle (or a turn that failed
 * on an API error), working, exited; anything else is still starting. Each agent reads its own
 * dialogs first and hands the rest here; `rateLimited` says which of its API errors are a limit.
 */
export function commonScreenObservation(
  screen: ClassifiedScreen,
  rateLimited: (error: string) => boolean,
): AgentObservation {
  switch (screen.state) {
    case "idle":
      if (screen.apiError) {
        return { kind: "turn-failed", error: screen.apiError, rateLimited: rateLimited(screen.apiError) };
      }
      return {
        kind: "screen-idle",
        interrupted: screen.interrupted ?? false,
        ...(screen.home ? { home: true } : {}),
      };
    case "working":
      return { kind: "screen-working" };
    case "exited":
      return { kind: "exited", status: screen.exitStatus ?? 0 };
    default:
      return { kind: "starting" };
  }
}
