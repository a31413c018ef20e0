import type { EventBus } from "../events/bus.ts";
import type { Clock } from "../shared/clock.ts";
import type { SessionService } from "./service.ts";
import { isTerminal } from "./session.ts";

export type TurnOutcome = "idle" | "ended" | "timeout";

/**
 * Resolves when the session's turn has ended (it is idle), the session has ended, or `timeoutMs`
 * passed. For a session whose prompt was taken: idle then means that turn is over.
 */
export function turnEnd(
  deps: { bus: Pick<EventBus, "subscribe">; sessions: Pick<SessionService, "get">; clock: Clock },
  sessionId: string,
  timeoutMs: number,
): Promise<TurnOutcome> {
  return new Promise((resolve) => {
    let done = false;
    const finish = (how: TurnOutcome) => {
      if (done) return;
      done = true;
      unsubscribe();
      cancelTimer();
      resolve(how);
    };
    const unsubscribe = deps.bus.subscribe((event) => {
      if (event.session?.id !== sessionId) return;
      if (event.event === "session.turn_ended") finish("idle");
      else if (event.event === "session.ended") finish("ended");
    });
    const cancelTimer = deps.clock.setTimer(() => finish("timeout"), timeoutMs);
    // The turn may have ended before we listened.
    const status = deps.sessions.get(sessionId).status;
    if (status === "idle") finish("idle");
    else if (isTerminal(status)) finish("ended");
  });
}
