import type { Clock } from "../../shared/clock.ts";
import type { Tmux } from "../../tmux/tmux.ts";
import { type DeliveryOptions, type DeliveryPort, type DeliveryResult, deliverPrompt } from "./delivery.ts";
import type { LiveSession } from "./session.ts";

export interface KeyboardDeps {
  tmux: Pick<Tmux, "paste" | "sendKeys">;
  clock: Clock;
}

/** Delivery over a live session's pane: tmux types, the agent's own signals confirm. */
export function deliverTo(
  session: LiveSession,
  deps: KeyboardDeps,
  text: string,
  options: DeliveryOptions,
): Promise<DeliveryResult> {
  const { tmux, clock } = deps;
  const { agent } = session;
  const pane = () => session.record().paneId ?? "";
  const port: DeliveryPort = {
    async readInput() {
      const reading = await session.readScreen();
      return reading?.input ?? null;
    },
    paste: (t) => tmux.paste(pane(), t),
    pressEnter: () => tmux.sendKeys(pane(), agent.keys.submit),
    clearInput: () => tmux.sendKeys(pane(), agent.keys.clearInput),
    screenChangeOrTimeout: (ms) => session.nextChange(ms),
    expectSubmit(expected) {
      let seen = false;
      let wake: (() => void) | null = null;
      const unsubscribe = session.onSubmitted((submitted) => {
        if (!agent.isSubmission(expected, submitted)) return;
        seen = true;
        wake?.();
      });
      return {
        confirmed(timeoutMs) {
          if (seen) return Promise.resolve(true);
          return new Promise<boolean>((resolve) => {
            const cancel = clock.setTimer(() => resolve(seen), timeoutMs);
            wake = () => {
              cancel();
              resolve(true);
            };
          });
        },
        cancel: unsubscribe,
      };
    },
    now: () => clock.now(),
    takenWhenEmptied: agent.recordsLate(text),
  };
  return deliverPrompt(port, text, options);
}
