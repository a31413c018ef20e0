import { startSpinner } from "./output.ts";

type Stream = { isTTY?: boolean; write(text: string): unknown };

/**
 * The spinner `ag run` shows on stderr while a turn runs and nothing new is on screen. The agents
 * write their text a block at a time (what each gives: docs/cli.md, "How finely the text
 * streams"), so a long answer can leave the screen still for seconds: the spinner says the agent
 * is at it. Only at a terminal: into a pipe or a file nothing is written. Its line is erased
 * before anything is printed and drawn again after, while the turn goes on; it stays away while
 * something else has the terminal (a question asked there, an attached agent).
 */
export interface WaitIndicator {
  /** Waiting, saying `text`, until something is printed (then again after it). */
  wait(text: string): void;
  /** A write to the terminal: the spinner's line is erased first, and drawn again after. */
  around(write: () => void): void;
  /** Something else has the terminal for a while (`reason` names it): no spinner meanwhile. */
  pause(reason: string): void;
  resume(reason: string): void;
  /** The turn is over: erased, never drawn again. */
  stop(): void;
}

export function createWaitIndicator(
  options: { stream?: Stream; spin?: typeof startSpinner } = {},
): WaitIndicator {
  const stream = options.stream ?? process.stderr;
  const spin = options.spin ?? startSpinner;
  const paused = new Set<string>();
  let spinner: { stop(): void } | null = null;
  let text: string | null = null;
  let done = false;

  const hide = () => {
    spinner?.stop();
    spinner = null;
  };
  const show = () => {
    if (!stream.isTTY || done || text === null || paused.size > 0 || spinner) return;
    spinner = spin(text, stream);
  };
  return {
    wait(what) {
      if (what !== text) hide();
      text = what;
      show();
    },
    around(write) {
      hide();
      write();
      show();
    },
    pause(reason) {
      paused.add(reason);
      hide();
    },
    resume(reason) {
      paused.delete(reason);
      show();
    },
    stop() {
      done = true;
      hide();
    },
  };
}
