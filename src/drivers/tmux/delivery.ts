/**
 * Typing a prompt into the agent so that it arrives once, whole, as one message:
 * one bracketed paste, Enter once the input box has settled, and confirmation from the agent
 * itself (its prompt-submit hook or a new prompt line in its transcript), never from screen text.
 * Enter is pressed again only while the text is still sitting in the input box. The paste is
 * repeated only when the agent dropped it: its input box was hidden after the paste, and came
 * back empty (and stayed so); a slow confirmation never turns into a duplicate prompt.
 */

export interface DeliveryPort {
  /** The live input box's text now, or null when no input box is shown (start-up, a dialog). */
  readInput(): Promise<string | null>;
  /**
   * Whether the agent would take Enter now as a newline (its guard after a paste is on screen).
   * Absent: never.
   */
  enterGuarded?(): Promise<boolean>;
  paste(text: string): Promise<void>;
  pressEnter(): Promise<void>;
  clearInput(): Promise<void>;
  /** Resolves on the next screen change, or after `ms` without one. */
  screenChangeOrTimeout(ms: number): Promise<void>;
  /** Starts listening for the agent's confirmation; call before pasting so none is missed. */
  expectSubmit(text: string): { confirmed(timeoutMs: number): Promise<boolean>; cancel(): void };
  now(): number;
  /** The agent has exited: nothing will take the prompt, however long one waits. */
  ended(): boolean;
  /**
   * The agent records this input late or never (a shell command, written once it has run; a
   * built-in command, never): an input box emptied by Enter is then the proof it was taken.
   */
  takenWhenEmptied?: boolean;
}

export interface DeliveryOptions {
  maxAttempts: number;
  /** How long the input box must stay unchanged before Enter (the harness measured ~150 ms). */
  settleMs: number;
  /**
   * How long to wait for the UI to show an input box at all (a fresh agent takes seconds), and
   * for the confirmation of a prompt whose box Enter emptied.
   */
  readyTimeoutMs: number;
  /** How long each Enter waits for the agent's confirmation. */
  confirmTimeoutMs: number;
}

export const DEFAULT_DELIVERY: DeliveryOptions = {
  maxAttempts: 3,
  settleMs: 150,
  readyTimeoutMs: 30_000,
  confirmTimeoutMs: 4_000,
};

export interface DeliveryResult {
  delivered: boolean;
  attempts: number;
  /** Why it failed, when it did. */
  reason?: string;
}

/** Why a prompt was not delivered when its agent exited first. */
const EXITED = "the agent exited";

export async function deliverPrompt(
  port: DeliveryPort,
  text: string,
  options: DeliveryOptions = DEFAULT_DELIVERY,
): Promise<DeliveryResult> {
  const ready = await waitForInputBox(port, options.readyTimeoutMs);
  if (ready === null)
    return { delivered: false, attempts: 0, reason: port.ended() ? EXITED : "the agent shows no input box" };
  if (ready.trim() !== "") await port.clearInput();

  const submit = port.expectSubmit(text);
  try {
    if (!(await typeIn(port, text, options)))
      return {
        delivered: false,
        attempts: 0,
        reason: port.ended() ? EXITED : "the agent dropped every paste",
      };
    let attempts = 0;
    while (attempts < options.maxAttempts) {
      if (port.ended()) return { delivered: false, attempts, reason: EXITED };
      attempts++;
      await port.pressEnter();
      if (port.takenWhenEmptied) {
        if (await emptiedOrConfirmed(port, submit, options.confirmTimeoutMs, options.settleMs))
          return { delivered: true, attempts };
        continue; // still in the box after the whole window: Enter again
      }
      if (await submit.confirmed(options.confirmTimeoutMs)) return { delivered: true, attempts };
      const input = await port.readInput();
      // Empty box: Enter was taken but the agent has not confirmed yet; pressing again would
      // only add an empty prompt. Wait for the confirmation as long as for a box to show: a
      // busy agent confirms late (OpenCode's hook came 8 s after its box emptied, one core busy),
      // and a prompt taken but answered "not delivered" is one a caller sends twice.
      if (input === null || input.trim() === "") {
        const late = await submit.confirmed(options.readyTimeoutMs);
        return late
          ? { delivered: true, attempts }
          : { delivered: false, attempts, reason: "the agent never confirmed the prompt" };
      }
    }
    return { delivered: false, attempts, reason: "the prompt stayed in the input box" };
  } finally {
    submit.cancel();
  }
}

/**
 * For input the agent records late or never: taken as soon as its record comes, or once the
 * input box, which held it, reads empty (or gives way to the command's own dialog) after Enter on
 * two captures `settleMs` apart (one capture can catch the box half redrawn on a busy machine).
 */
async function emptiedOrConfirmed(
  port: DeliveryPort,
  submit: ReturnType<DeliveryPort["expectSubmit"]>,
  timeoutMs: number,
  settleMs: number,
): Promise<boolean> {
  const deadline = port.now() + timeoutMs;
  let emptySince: number | null = null;
  while (port.now() < deadline && !port.ended()) {
    if (await submit.confirmed(0)) return true;
    const input = await port.readInput();
    const empty = input === null || input.trim() === "";
    if (!empty) emptySince = null;
    else if (emptySince === null) emptySince = port.now();
    else if (port.now() - emptySince >= settleMs) return true;
    await port.screenChangeOrTimeout(Math.min(emptySince === null ? 250 : settleMs, deadline - port.now()));
  }
  return submit.confirmed(0);
}

async function waitForInputBox(port: DeliveryPort, timeoutMs: number): Promise<string | null> {
  const deadline = port.now() + timeoutMs;
  for (;;) {
    const input = await port.readInput();
    if (input !== null) return input;
    if (port.ended() || port.now() >= deadline) return null;
    await port.screenChangeOrTimeout(Math.min(250, deadline - port.now()));
  }
}

/**
 * How long an input box that came back empty after hiding must stay empty before the paste is
 * taken as dropped: a paste the agent reads late (a busy machine) shows in the box by then.
 */
export const DROPPED_AFTER_MS = 1_000;

/**
 * Pastes the text, again while the agent drops it (at most `maxAttempts` pastes). An agent may
 * hide its input box just after drawing it (Gemini CLI loading a resumed conversation) and drop
 * what arrives meanwhile. False: every paste was dropped (or the agent exited).
 */
async function typeIn(port: DeliveryPort, text: string, options: DeliveryOptions): Promise<boolean> {
  for (let pastes = 1; ; pastes++) {
    await port.paste(text);
    const shown = await waitForSettledInput(port, options.settleMs, options.readyTimeoutMs);
    if (shown !== "dropped") return !port.ended();
    if (pastes >= options.maxAttempts) return false;
  }
}

/**
 * Waits until the input box shows something, has not changed for `settleMs` and the agent no
 * longer guards it against Enter ("settled"), or
 * has been hidden since the paste and then shown empty for DROPPED_AFTER_MS ("dropped"), or the
 * timeout passes ("timeout": Enter then decides with what the box holds).
 */
async function waitForSettledInput(
  port: DeliveryPort,
  settleMs: number,
  timeoutMs: number,
): Promise<"settled" | "dropped" | "timeout"> {
  const deadline = port.now() + timeoutMs;
  let last = await port.readInput();
  let since = port.now();
  let hidden = last === null;
  while (port.now() < deadline && !port.ended()) {
    await port.screenChangeOrTimeout(settleMs);
    const input = await port.readInput();
    if (input === null) hidden = true;
    if (input !== last) {
      last = input;
      since = port.now();
      continue;
    }
    if (input === null) continue;
    const still = port.now() - since;
    if (input.trim() !== "" && still >= settleMs && !(await port.enterGuarded?.())) return "settled";
    if (input.trim() === "" && hidden && still >= DROPPED_AFTER_MS) return "dropped";
  }
  return "timeout";
}
