import { describe, expect, test } from "bun:test";
import { createOutputCoalescer } from "../../src/tmux/coalesce.ts";
import { createDeathTracker } from "../../src/tmux/deaths.ts";
import {
  type ControlReply,
  createControlFramer,
  decodeOutputData,
  parseNotification,
} from "../../src/tmux/framing.ts";
import { until } from "../helpers/until.ts";

const bytes = (text: string) => new TextEncoder().encode(text);

function frame(chunks: Array<string | Uint8Array>) {
  const replies: ControlReply[] = [];
  const notes: string[] = [];
  const outputs: Array<[string, Uint8Array]> = [];
  const framer = createControlFramer({
    reply: (r) => replies.push(r),
    notification: (n) => notes.push(n),
    // Copied: the framer hands out views of its input.
    output: (paneId, escaped) => outputs.push([paneId, escaped.slice()]),
  });
  for (const chunk of chunks) framer.push(typeof chunk === "string" ? bytes(chunk) : chunk);
  return { replies, notes, outputs };
}

const decoded = (outputs: Array<[string, Uint8Array]>) =>
  outputs.map(([paneId, escaped]) => [paneId, Buffer.from(decodeOutputData(escaped)).toString("latin1")]);

describe("control-mode framing", () => {
  test("a reply's lines sit between its guards; notifications and pane output around them", () => {
    const { replies, notes, outputs } = frame([
      "%begin 1700000000 260 0\n%end 1700000000 260 0\n%window-add @0\n",
      "%begin 1700000000 266 1\n@1 %1 123\n%end 1700000000 266 1\n%output %1 hi\\015\\012\n",
    ]);
    expect(replies).toEqual([
      { number: 260, flags: 0, ok: true, lines: [] },
      { number: 266, flags: 1, ok: true, lines: ["@1 %1 123"] },
    ]);
    expect(notes).toEqual(["%window-add @0"]);
    expect(decoded(outputs)).toEqual([["%1", "hi\r\n"]]);
  });

  test("pane output is framed as bytes: a character split between notifications stays whole", () => {
    // "é" is C3 A9; tmux cut the program's write between the two bytes. Neither line is UTF-8.
    const first = Buffer.concat([bytes("%output %3 caf"), Buffer.from([0xc3]), bytes("\n%output %3 ")]);
    const second = Buffer.concat([Buffer.from([0xa9]), bytes("\\012\n%window-close @2\n")]);
    const { outputs, notes } = frame([first, second]);
    const joined = Buffer.concat(outputs.map(([, escaped]) => decodeOutputData(escaped)));
    expect(joined.toString("utf8")).toBe("café\n");
    expect(outputs.map(([paneId]) => paneId)).toEqual(["%3", "%3"]);
    expect(notes).toEqual(["%window-close @2"]);
  });

  test("%extended-output carries its data after ' : ', and empty output is empty", () => {
    const { outputs } = frame(["%extended-output %7 1234 : a : b\\134\n%output %8 \n%output %9\n"]);
    expect(decoded(outputs)).toEqual([
      ["%7", "a : b\\"],
      ["%8", ""],
      ["%9", ""],
    ]);
  });

  test("lines split across chunks are joined", () => {
    const { replies } = frame(["%beg", "in 1 7 1\nhel", "lo\n%end 1 7", " 1\n"]);
    expect(replies).toEqual([{ number: 7, flags: 1, ok: true, lines: ["hello"] }]);
  });

  test("%error closes a block as a failure", () => {
    const { replies } = frame(["%begin 1 8 1\nparse error: unknown command: x\n%error 1 8 1\n"]);
    expect(replies).toEqual([{ number: 8, flags: 1, ok: false, lines: ["parse error: unknown command: x"] }]);
  });

  test("guard-like lines inside a reply (a captured pane) are content", () => {
    const captured = ["%end 1 2 1", "%begin 1 2 1", "%error 1 9 0", "%end 2 9 1", "%exit", "%output %1 x"];
    const { replies, notes } = frame([`%begin 1 9 1\n${captured.join("\n")}\n%end 1 9 1\n`]);
    expect(replies).toEqual([{ number: 9, flags: 1, ok: true, lines: captured }]);
    expect(notes).toEqual([]);
  });

  test("blank and captured-empty lines are kept inside replies", () => {
    const { replies } = frame(["%begin 1 3 1\n\nx\n\n%end 1 3 1\n"]);
    expect(replies[0]!.lines).toEqual(["", "x", ""]);
  });
});

describe("pane output decoding", () => {
  test("every octal escape tmux writes (bytes below 32, backslash) comes back as its byte", () => {
    const all = Uint8Array.from({ length: 256 }, (_, i) => i);
    // tmux's control_append_data: `\\%03o` for < 0x20 and '\\', the byte itself otherwise.
    let escaped = "";
    for (const b of all)
      escaped += b < 32 || b === 92 ? `\\${b.toString(8).padStart(3, "0")}` : String.fromCharCode(b);
    expect(decodeOutputData(Buffer.from(escaped, "latin1"))).toEqual(all);
  });

  test("escapes, UTF-8 and raw high bytes mix; nothing else is touched", () => {
    const escaped = Buffer.concat([bytes("\\033[31mred\\033[0m ü \\134x "), Buffer.from([0xff, 0x80])]);
    const expected = Buffer.concat([bytes("\x1b[31mred\x1b[0m ü \\x "), Buffer.from([0xff, 0x80])]);
    expect(Buffer.from(decodeOutputData(escaped))).toEqual(expected);
    // tmux never writes a bare backslash; one not followed by three octal digits is kept as is.
    expect(Buffer.from(decodeOutputData(bytes("a\\9b\\01"))).toString()).toBe("a\\9b\\01");
  });
});

describe("notifications", () => {
  test("layout change, window close, exit and pane-dead subscriptions are read", () => {
    expect(parseNotification("%layout-change @3 b25d,80x24,0,0,2 b25d,80x24,0,0,2 *")).toEqual({
      kind: "layout-change",
      windowId: "@3",
    });
    expect(parseNotification("%window-close @4")).toEqual({ kind: "window-close", windowId: "@4" });
    expect(parseNotification("%unlinked-window-close @5")).toEqual({ kind: "window-close", windowId: "@5" });
    expect(parseNotification("%exit")).toEqual({ kind: "exit", reason: "" });
    expect(parseNotification("%exit server exited")).toEqual({ kind: "exit", reason: "server exited" });
    expect(parseNotification("%subscription-changed dead $0 @1 1 %1 : 1 7")).toEqual({
      kind: "subscription",
      name: "dead",
      windowId: "@1",
      paneId: "%1",
      value: "1 7",
    });
    expect(parseNotification("%subscription-changed dead $0 @1 1 %1 - x : 0 ")).toMatchObject({
      value: "0 ",
    });
    expect(parseNotification("%sessions-changed")).toEqual({ kind: "other", name: "%sessions-changed" });
  });
});

describe("output coalescing", () => {
  test("a burst gives one signal at once and one when the burst is over", async () => {
    const signals: string[] = [];
    const coalescer = createOutputCoalescer(20, (pane) => signals.push(pane));
    for (let i = 0; i < 500; i++) coalescer.touch("%1");
    expect(signals).toEqual(["%1"]);
    await Bun.sleep(60);
    expect(signals).toEqual(["%1", "%1"]);
    await Bun.sleep(40);
    expect(signals).toEqual(["%1", "%1"]);
  });

  test("panes are independent, and a forgotten pane is not signalled again", async () => {
    const signals: string[] = [];
    const coalescer = createOutputCoalescer(20, (pane) => signals.push(pane));
    coalescer.touch("%1");
    coalescer.touch("%2");
    coalescer.touch("%1");
    coalescer.touch("%2");
    coalescer.forget("%2");
    await Bun.sleep(60);
    expect(signals).toEqual(["%1", "%2", "%1"]);
    coalescer.clear();
  });

  test("sustained output is signalled about once per interval", async () => {
    const signals: number[] = [];
    const coalescer = createOutputCoalescer(20, () => signals.push(performance.now()));
    const stopAt = performance.now() + 300;
    let lastTouch = 0;
    let signalledAtOnce = false;
    while (performance.now() < stopAt) {
      const before = signals.length;
      coalescer.touch("%1");
      lastTouch = performance.now();
      // A touch after a quiet interval (a starved loop) is signalled at once, with no trailing edge.
      signalledAtOnce = signals.length > before;
      await Bun.sleep(1);
    }
    // Not a count of timer firings, which a loaded machine delays (7 where 8 were expected, once):
    // it keeps signalling while output goes on (its trailing edge comes after the last touch),
    // never twice within an interval, and far fewer times than it was touched.
    await until(() => signalledAtOnce || (signals.at(-1) ?? 0) >= lastTouch, 5_000);
    expect(signals.length).toBeGreaterThanOrEqual(2);
    const gaps = signals.slice(1).map((at, i) => at - signals[i]!);
    expect(gaps.every((gap) => gap >= 19)).toBe(true);
    expect(signals.length).toBeLessThanOrEqual(300 / 20 + 2);
    coalescer.clear();
  });
});

describe("pane death tracking", () => {
  function tracker(answers: string[]) {
    const died: Array<[string, number | null]> = [];
    const commands: string[] = [];
    const deaths = createDeathTracker({
      run: async (args) => {
        commands.push(args[0]!);
        return args[0] === "display-message" ? [answers.shift() ?? ""] : [];
      },
      isConnected: () => true,
      died: (paneId, status) => died.push([paneId, status]),
      followUp: [
        [1, false],
        [1, true],
        [1, false],
      ],
    });
    return { deaths, died, commands };
  }

  test("a death with its status is reported once; a respawned pane can die again", () => {
    const { deaths, died } = tracker([]);
    deaths.observe("%1", "0  ");
    deaths.observe("%1", "1 3 ");
    deaths.observe("%1", "1 3 ");
    deaths.observe("%2", "1  9");
    deaths.observe("%1", "0  ");
    deaths.observe("%1", "1 0 ");
    expect(died).toEqual([
      ["%1", 3],
      ["%2", null],
      ["%1", 0],
    ]);
  });

  test("dead but unreaped: looked up again, and reported with the status once tmux has it", async () => {
    const { deaths, died, commands } = tracker(["1  ", "1 7 "]);
    deaths.observe("%1", "1  ");
    // Follow-ups run on timers: wait for their outcome, not for a fixed time (a loaded run was late).
    await until(() => died.length > 0);
    expect(died).toEqual([["%1", 7]]);
    expect(commands).toEqual(["display-message", "run-shell", "display-message"]);
  });

  test("never reaped: reported anyway, without a status", async () => {
    const { deaths, died } = tracker(["1  ", "1  ", "1  "]);
    deaths.observe("%1", "1  ");
    deaths.observe("%1", "1  ");
    await until(() => died.length > 0);
    expect(died).toEqual([["%1", null]]);
  });

  test("closed while unreaped: nothing reported", async () => {
    const { deaths, died, commands } = tracker([""]);
    deaths.observe("%1", "1  ");
    // Its one look-up answered "no such pane". Absence cannot be awaited: the sleep gives a wrong
    // follow-up time to show (a slow machine can only hide one, never fail the test falsely).
    await until(() => commands.length > 0);
    await Bun.sleep(30);
    expect(died).toEqual([]);
    expect(commands).toEqual(["display-message"]);
  });
});
