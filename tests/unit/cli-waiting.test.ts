import { describe, expect, test } from "bun:test";
import { createWaitIndicator } from "../../src/cli/waiting.ts";

/** The spinner of `ag run` while nothing new has arrived (src/cli/waiting.ts). */

/** A terminal (or not) that keeps what was written to it, and the spinners started on it. */
function terminal(isTTY: boolean) {
  const written: string[] = [];
  const spinners: Array<{ text: string; stopped: boolean }> = [];
  const stream = { isTTY, write: (text: string) => written.push(text) };
  const spin = (text: string) => {
    const spinner = { text, stopped: false };
    spinners.push(spinner);
    // As the real one does: a frame at once, the line erased when it stops.
    stream.write(`\r⠋ ${text}…`);
    return {
      stop() {
        spinner.stopped = true;
        stream.write("\r\u001b[2K");
      },
    };
  };
  const running = () => spinners.filter((s) => !s.stopped).map((s) => s.text);
  return { stream, spin, written, spinners, running };
}

describe("the waiting spinner of ag run", () => {
  test("at a terminal: shown while nothing has arrived, its line erased before the text, back after it", () => {
    const t = terminal(true);
    const waiting = createWaitIndicator({ stream: t.stream, spin: t.spin });
    waiting.wait("waiting for claude's answer");
    expect(t.running()).toEqual(["waiting for claude's answer"]);
    waiting.around(() => t.stream.write("Hello\n"));
    // Erased, then the text, then drawn again below it.
    expect(t.written.slice(-3)).toEqual(["\r\u001b[2K", "Hello\n", "\r⠋ waiting for claude's answer…"]);
    waiting.wait("claude is still working");
    expect(t.running()).toEqual(["claude is still working"]);
    waiting.stop();
    expect(t.running()).toEqual([]);
    // Over is over: nothing printed afterwards brings it back.
    waiting.around(() => t.stream.write("last line\n"));
    waiting.wait("claude is still working");
    expect(t.running()).toEqual([]);
    expect(t.written.at(-1)).toBe("last line\n");
  });

  test("never on a non-terminal: not one byte besides the output", () => {
    const t = terminal(false);
    const waiting = createWaitIndicator({ stream: t.stream, spin: t.spin });
    waiting.wait("waiting for claude's answer");
    waiting.around(() => t.stream.write("Hello\n"));
    waiting.stop();
    expect(t.spinners).toEqual([]);
    expect(t.written).toEqual(["Hello\n"]);
  });

  test("paused while something else has the terminal, until every reason is gone", () => {
    const t = terminal(true);
    const waiting = createWaitIndicator({ stream: t.stream, spin: t.spin });
    waiting.wait("waiting for claude's answer");
    waiting.pause("pending");
    waiting.pause("attached");
    expect(t.running()).toEqual([]);
    waiting.around(() => t.stream.write("allow Write?\n"));
    expect(t.running()).toEqual([]);
    waiting.resume("attached");
    expect(t.running()).toEqual([]);
    waiting.resume("pending");
    expect(t.running()).toEqual(["waiting for claude's answer"]);
  });

  test("nothing before the wait starts: creating the session has a spinner of its own", () => {
    const t = terminal(true);
    const waiting = createWaitIndicator({ stream: t.stream, spin: t.spin });
    waiting.around(() => t.stream.write("note\n"));
    waiting.resume("pending");
    expect(t.spinners).toEqual([]);
  });
});
