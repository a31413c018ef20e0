import type { ScreenReading } from "../../agents/agent.ts";
import type { DiagnosticsSink } from "../../diagnostics/index.ts";
import type { Clock } from "../../shared/clock.ts";
import type { Logger } from "../../shared/log.ts";

/**
 * How long a dialog ag answered may stay on the screen before it counts as unanswered: the agent
 * redraws after the key, and a capture taken in between still shows the dialog.
 */
export const AUTO_ANSWER_GRACE_MS = 5_000;

/** Between two keys of one answer: a key sent into the dialog's redraw can be lost. */
const KEY_GAP_MS = 150;

export interface AutoAnswerer {
  /**
   * Called with a screen reading that carries an `autoAnswer`. Presses its keys the first time
   * this dialog is seen; true while the reading must not reach the state (the dialog is being
   * answered). After the grace period a dialog still shown goes to the user after all: ag
   * answers each dialog once, never in a loop.
   */
  handle(answer: NonNullable<ScreenReading["autoAnswer"]>): boolean;
  dispose(): void;
}

export function createAutoAnswerer(deps: {
  sessionId: () => string;
  clock: Clock;
  logger: Logger;
  diagnostics?: DiagnosticsSink;
  sendKeys(keys: string[]): Promise<void>;
  /** Reads the screen again: a dialog that stays without redrawing sends no pane output. */
  reread(): void;
  /** The agent drops keys reaching a dialog sooner than this after it was drawn (AgentAdapter.keys). */
  settleMs?: number;
}): AutoAnswerer {
  const answeredAt = new Map<string, number>();
  let cancelReread: (() => void) | null = null;
  const pause = (ms: number) => new Promise<void>((resolve) => deps.clock.setTimer(resolve, ms));
  /** After the agent's settle time, one key at a time: the dialog redraws between them. */
  async function press(keys: string[]): Promise<void> {
    if (deps.settleMs) await pause(deps.settleMs);
    for (const [i, key] of keys.entries()) {
      if (i > 0) await pause(KEY_GAP_MS);
      await deps.sendKeys([key]);
    }
  }

  return {
    handle(answer) {
      const now = deps.clock.now();
      const at = answeredAt.get(answer.dialog);
      if (at !== undefined) return now - at < AUTO_ANSWER_GRACE_MS;
      answeredAt.set(answer.dialog, now);
      const note = `session ${deps.sessionId()}: answered the agent's ${answer.dialog} dialog itself (${answer.keys.join(" ")})`;
      deps.logger.info(note);
      deps.diagnostics?.record("session.auto_answer", note);
      // Straight to the pane, not through the session's keyboard queue: a prompt delivery holds
      // that queue while it waits for the input box, which this dialog hides; it types nothing
      // until the box is back.
      press(answer.keys).catch((error) => deps.logger.warn(`${note}: keys not sent`, error));
      cancelReread?.();
      cancelReread = deps.clock.setTimer(() => {
        cancelReread = null;
        deps.reread();
      }, AUTO_ANSWER_GRACE_MS);
      return true;
    },
    dispose() {
      cancelReread?.();
      cancelReread = null;
    },
  };
}
