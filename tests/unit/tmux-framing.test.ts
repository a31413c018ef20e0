import { describe, expect, test } from "bun:test";
import { createOutputCoalescer } from "../../src/tmux/coalesce.ts";
import { createDeathTracker } from "../../src/tmux/deaths.ts";
import { type ControlReply, createControlFramer, parseNotification } from "../../src/tmux/framing.ts";

function frame(chunks: string[]) {
  const replies: ControlReply[] = [];
  const notes: string[] = [];
  const framer = createControlFramer({ reply: (r) => replies.push(r), notification: (n) => notes.push(n) });
  for (const chunk of chunks) framer.push(chunk);
  return { replies, notes };
}

describe("control-mode framing", () => {
  test("a reply's lines sit between its guards; notifications around them", () => {
    const { replies, notes } = frame([
      "%begin 1700000000 260 0\n%end 1700000000 260 0\n%window-add @0\n",
      "%begin 1700000000 266 1\n@1 %1 123\n%end 1700000000 266 1\n%output %1 hi\\015\\012\n",
    ]);
    expect(replies).toEqual([
      { number: 260, flags: 0, ok: true, lines: [] },
      { number: 266, flags: 1, ok: true, lines: ["@1 %1 123"] },
    ]);
    expect(notes).toEqual(["%window-add @0", "%output %1 hi\\015\\012"]);
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

describe("notifications", () => {
  test("output, window close, exit and pane-dead subscriptions are read", () => {
    expect(parseNotification("%output %12 some \\033[1mtext")).toEqual({ kind: "output", paneId: "%12" });
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
    const until = performance.now() + 300;
    while (performance.now() < until) {
      coalescer.touch("%1");
      await Bun.sleep(1);
    }
    await Bun.sleep(50);
    expect(signals.length).toBeGreaterThanOrEqual(8);
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
    await Bun.sleep(30);
    expect(died).toEqual([["%1", 7]]);
    expect(commands).toEqual(["display-message", "run-shell", "display-message"]);
  });

  test("never reaped: reported anyway, without a status", async () => {
    const { deaths, died } = tracker(["1  ", "1  ", "1  "]);
    deaths.observe("%1", "1  ");
    deaths.observe("%1", "1  ");
    await Bun.sleep(30);
    expect(died).toEqual([["%1", null]]);
  });

  test("closed while unreaped: nothing reported", async () => {
    const { deaths, died } = tracker([""]);
    deaths.observe("%1", "1  ");
    await Bun.sleep(30);
    expect(died).toEqual([]);
  });
});
