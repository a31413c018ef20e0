import { createInterface } from "node:readline";

/**
 * Questions to the person at the terminal while something else goes on (`ag run` streams the
 * agent's reply and offers to answer its prompts). One key, no Enter: the terminal is put in raw
 * mode for the wait and put back after. Ctrl+C in raw mode is a byte, not a signal: it is
 * handed on as SIGINT so that Ctrl+C still means "stop following".
 */

export interface KeyInput {
  isTTY?: boolean;
  setRawMode?(mode: boolean): unknown;
  on(event: "data", listener: (chunk: Buffer | string) => void): unknown;
  off(event: "data", listener: (chunk: Buffer | string) => void): unknown;
  resume(): unknown;
  pause(): unknown;
}

/** True when a person can be asked: both stdin and stdout are a terminal. */
export function canAsk(
  stdin: { isTTY?: boolean } = process.stdin,
  stdout: { isTTY?: boolean } = process.stdout,
): boolean {
  return stdin.isTTY === true && stdout.isTTY === true;
}

/**
 * Resolves with the next key pressed (lower-cased; "enter", "escape" for those), or null when
 * `signal` aborts first.
 */
export function readKey(signal: AbortSignal, input: KeyInput = process.stdin): Promise<string | null> {
  if (signal.aborted) return Promise.resolve(null);
  return new Promise((resolve) => {
    const done = (key: string | null) => {
      input.off("data", onData);
      signal.removeEventListener("abort", onAbort);
      input.setRawMode?.(false);
      input.pause();
      resolve(key);
    };
    const onAbort = () => done(null);
    const onData = (chunk: Buffer | string) => {
      const text = chunk.toString();
      if (text === "\u0003") {
        done(null);
        process.kill(process.pid, "SIGINT");
        return;
      }
      done(keyName(text));
    };
    signal.addEventListener("abort", onAbort, { once: true });
    input.setRawMode?.(true);
    input.on("data", onData);
    input.resume();
  });
}

export function keyName(text: string): string {
  if (text === "\r" || text === "\n") return "enter";
  if (text === "\u001b") return "escape";
  return text.slice(0, 1).toLowerCase();
}

/** One line typed by the person (cooked mode, Enter ends it); null on Ctrl+D or an abort. */
export function readLine(question: string, signal: AbortSignal): Promise<string | null> {
  return new Promise((resolve) => {
    const rl = createInterface({ input: process.stdin, output: process.stderr, terminal: true });
    let answered = false;
    const finish = (value: string | null) => {
      if (answered) return;
      answered = true;
      signal.removeEventListener("abort", onAbort);
      rl.close();
      process.stdin.pause();
      resolve(value);
    };
    const onAbort = () => finish(null);
    signal.addEventListener("abort", onAbort, { once: true });
    rl.on("close", () => finish(null));
    rl.on("SIGINT", () => {
      finish(null);
      process.kill(process.pid, "SIGINT");
    });
    rl.question(question, (line) => finish(line));
  });
}
