import type { KeyStep } from "../../agents/agent.ts";
import type { Clock } from "../../shared/clock.ts";
import { AgError } from "../../shared/errors.ts";
import type { Logger } from "../../shared/log.ts";
import type { Tmux } from "../../tmux/tmux.ts";
import type { AgKeys } from "../observation.ts";
import type { DriverSession } from "../port.ts";
import { type DeliveryOptions, type DeliveryPort, type DeliveryResult, deliverPrompt } from "./delivery.ts";

export interface KeyboardDeps {
  tmux: Pick<Tmux, "paste" | "sendKeys">;
  clock: Clock;
}

/** Delivery over a live session's pane: tmux types, the agent's own signals confirm. */
export function deliverTo(
  session: DriverSession,
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
    async enterGuarded() {
      return (await session.readScreen())?.enterGuarded === true;
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
    ended: () => session.ended(),
    takenWhenEmptied: agent.recordsLate(text),
  };
  return deliverPrompt(port, text, options);
}

/**
 * How long an answer waits for its dialog to be drawn. Claude Code draws it 30–250 ms after its
 * permission hook, with every core busy (measured).
 */
const DRAW_WAIT_MS = 3_000;

export interface PressDeps {
  tmux: Pick<Tmux, "sendKeys" | "sendLiteral">;
  clock: Clock;
  logger: Logger;
}

/**
 * Presses ag's keys for the session, then tells its state what they were. Keys that answer a
 * dialog are for that dialog only: checked again once the keyboard is ours (two answers to one
 * dialog must not let the second land on the dialog after it).
 */
export function pressKeys(
  session: DriverSession,
  deps: PressDeps,
  steps: KeyStep[],
  what: AgKeys,
  dialog?: string,
): Promise<void> {
  return session.typing(async () => {
    if (dialog !== undefined) {
      await drawn(session, deps, dialog);
      const now = session.status().pending;
      if (now?.id !== dialog)
        throw new AgError(
          now ? "PERMISSION_MISMATCH" : "NO_PENDING_PERMISSION",
          now ? `the pending permission is now ${now.id}, not ${dialog}` : `${dialog} was answered meanwhile`,
        );
    }
    const pane = session.record().paneId;
    // A session not placed yet has nothing to type into: saying "done" would be a lie.
    if (!pane) throw new AgError("CONFLICT", `session ${session.id} has no pane to press keys in yet`);
    for (const [i, step] of steps.entries()) {
      // The agent redraws between keys of a dialog; a key sent into the redraw can be lost.
      if (i > 0) await new Promise<void>((resolve) => deps.clock.setTimer(resolve, 150));
      if ("keys" in step) await deps.tmux.sendKeys(pane, step.keys);
      else await deps.tmux.sendLiteral(pane, step.text);
    }
    session.observe({ kind: "keys", keys: what, ...(dialog === undefined ? {} : { dialog }) }, "ag");
  });
}

/**
 * Waits until the screen has shown the dialog an answer is for. The agent's hook comes before
 * its dialog is drawn, and keys pressed in between are lost: the dialog then waits with its
 * answer already reported (seen under load: an Escape 5 ms after the hook, the dialog drawn
 * 50 ms later). Past DRAW_WAIT_MS the keys go anyway: a dialog the screen reader does not know.
 */
async function drawn(session: DriverSession, deps: PressDeps, dialog: string): Promise<void> {
  const deadline = deps.clock.now() + DRAW_WAIT_MS;
  const waits = () => {
    const state = session.status();
    return state.pending?.id === dialog && !state.dialogSeen;
  };
  // One fresh look; after it, the pane's own output brings each new frame (no re-reading on a timer).
  if (waits()) await session.readScreen();
  while (waits()) {
    const left = deadline - deps.clock.now();
    if (left <= 0) {
      deps.logger.debug(`session ${session.id}: ${dialog} not seen on screen; answering anyway`);
      return;
    }
    await session.nextChange(left);
  }
  // The agent drops keys that reach a dialog too soon after it was drawn (Claude Code 2.1.328).
  const settle = session.agent.keys.dialogSettleMs ?? 0;
  const seenAt = session.status().dialogSeenAt;
  const early = seenAt === null ? 0 : seenAt + settle - deps.clock.now();
  if (early > 0) await new Promise<void>((resolve) => deps.clock.setTimer(resolve, early));
}
