import { describe, expect, test } from "bun:test";
import { parseAnswer } from "../../src/cli/commands/answer.ts";
import { beforeIdOfPage } from "../../src/cli/commands/read.ts";
import { messageText } from "../../src/cli/commands/send.ts";
import { createSseParser, type StreamedEvent } from "../../src/cli/events.ts";
import { colourEnabled, formatAge, formatTable, paint, plural, startSpinner } from "../../src/cli/output.ts";
import { askAtTerminal } from "../../src/cli/prompt.ts";
import { createTimeline, formatTimelineLine } from "../../src/cli/timeline.ts";
import { createTurnFollower } from "../../src/cli/turn.ts";
import { formatCount, formatUsd, isEmptyMessage, messageLines, sessionRows } from "../../src/cli/views.ts";
import { formatEvent, formatGap } from "../../src/events/sse.ts";
import { SAMPLE_PAYLOADS } from "../helpers/events.ts";

const SESSION = { id: "s-1", name: "one", workDir: "/w" };

function status(now: string, pendingPermission: unknown, previous = "working") {
  return { status: now, previous, pendingPermission, source: "hook" };
}

function event(
  name: string,
  detail = "",
  meta: Record<string, unknown> = {},
  session = SESSION,
): StreamedEvent {
  return { id: 1, event: name, timestamp: "2026-01-01T10:00:00.000Z", session, detail, meta };
}

describe("the SSE parser reads what the server writes", () => {
  test("events in any chunking, comments and pings skipped, the gap notice without an id", () => {
    const written =
      ": connected\n\n" +
      formatEvent({
        id: 7,
        event: "message.assistant",
        timestamp: "t",
        session: SESSION,
        detail: "a\nb",
        meta: SAMPLE_PAYLOADS["message.assistant"],
      }) +
      ":ping\n\n" +
      formatGap({ reason: "evicted", lastEventId: 3, oldestHeldId: 5 }, "t") +
      formatEvent({
        id: 8,
        event: "session.ended",
        timestamp: "t",
        detail: "killed",
        meta: SAMPLE_PAYLOADS["session.ended"],
      });
    for (const size of [1, 3, 17, written.length]) {
      const parse = createSseParser();
      const events: StreamedEvent[] = [];
      for (let i = 0; i < written.length; i += size) events.push(...parse(written.slice(i, i + size)));
      expect(events.map((e) => [e.id, e.event, e.detail])).toEqual([
        [7, "message.assistant", "a\nb"],
        [null, "gap", "events after 3 before 5 are no longer held"],
        [8, "session.ended", "killed"],
      ]);
      expect(events[0]!.session).toEqual(SESSION);
    }
  });

  test("CRLF line ends and an unfinished block wait for the rest", () => {
    const parse = createSseParser();
    expect(parse('id: 1\r\nevent: x\r\ndata: {"detail":"d","meta":{}}\r\n')).toEqual([]);
    expect(parse("\r\n").map((e) => [e.id, e.event])).toEqual([[1, "x"]]);
  });
});

describe("ag read pages count back from the newest message", () => {
  test("page 1 is the newest `limit`, each later page the `limit` before it", () => {
    // 450 messages, 200 a page: page 1 = 251–450, page 2 = 51–250, page 3 = 1–50.
    expect(beforeIdOfPage(450, 1, 200)).toBe(451);
    expect(beforeIdOfPage(450, 2, 200)).toBe(251);
    expect(beforeIdOfPage(450, 3, 200)).toBe(51);
    expect(beforeIdOfPage(450, 4, 200)).toBeNull();
    expect(beforeIdOfPage(400, 3, 200)).toBeNull();
    expect(beforeIdOfPage(0, 1, 200)).toBeNull();
  });
});

describe("terminal output", () => {
  test("a table aligns columns by what the terminal shows, colour escapes included", () => {
    const rows = [
      ["abc", paint("idle", "green", true), "/a"],
      ["a", "working", "/bb"],
    ];
    const lines = formatTable(["ID", "STATUS", "DIR"], rows);
    const plain = lines.map((l) => l.replaceAll("\u001b[32m", "").replaceAll("\u001b[0m", ""));
    expect(plain).toEqual(["ID   STATUS   DIR", "abc  idle     /a", "a    working  /bb"]);
    expect(lines[1]).toContain("\u001b[32midle\u001b[0m");
  });

  test("no colour when it is off", () => {
    expect(paint("x", "red", false)).toBe("x");
    const line = createTimeline()(event("status.error", "gone"))!;
    expect(formatTimelineLine("2026-01-01T10:00:00.000Z", line, false)).not.toContain("\u001b");
  });

  test("colour only on a terminal, and never with NO_COLOR set (to anything but the empty string)", () => {
    const terminal = { isTTY: true };
    expect(colourEnabled(terminal, {})).toBe(true);
    expect(colourEnabled(terminal, { NO_COLOR: "1" })).toBe(false);
    expect(colourEnabled(terminal, { NO_COLOR: "true" })).toBe(false);
    expect(colourEnabled(terminal, { NO_COLOR: "" })).toBe(true);
    expect(colourEnabled({ isTTY: false }, {})).toBe(false);
    expect(colourEnabled({}, {})).toBe(false);
  });

  test("a wait spins on a terminal and clears its line; elsewhere it is one note", async () => {
    const written: string[] = [];
    const terminal = { isTTY: true, write: (text: string) => written.push(text) };
    const spinner = startSpinner("waiting", terminal);
    expect(written).toEqual(["\r⠋ waiting…"]);
    while (written.length < 3) await Bun.sleep(20);
    spinner.stop();
    const drawn = written.length;
    expect(written[1]).toBe("\r⠙ waiting…");
    expect(written.at(-1)).toBe("\r\u001b[2K");
    await Bun.sleep(150);
    expect(written).toHaveLength(drawn); // stopped means stopped

    const piped: string[] = [];
    startSpinner("waiting", { isTTY: false, write: (text: string) => piped.push(text) }).stop();
    expect(piped).toEqual(["waiting…\n"]);
  });

  test("ages use the largest unit", () => {
    expect([formatAge(5), formatAge(125), formatAge(7200), formatAge(200_000), formatAge(-3)]).toEqual([
      "5s",
      "2m",
      "2h",
      "2d",
      "0s",
    ]);
  });

  test("an event is one line: time, what happened, detail with its newlines folded", () => {
    const line = createTimeline()(event("message.assistant", "one\ntwo"))!;
    expect(formatTimelineLine("2026-01-01T10:00:00.000Z", line, false)).toMatch(
      /^\d\d:\d\d:\d\d {2}assistant {4}one ⏎ two$/,
    );
  });

  test("a message is a heading and its text indented", () => {
    const lines = messageLines(
      {
        id: 3,
        role: "assistant",
        kind: "tool_use",
        toolName: "Bash",
        text: '{"command":"ls"}',
        timestamp: null,
        uuid: null,
      },
      false,
    );
    expect(lines).toEqual(["#3 assistant · tool_use Bash", '    {"command":"ls"}']);
  });
});

describe("ag run tells its turn from the session's events", () => {
  test("idles are not the end (a new session's first one is its boot); the server's turn end is", () => {
    const turn = createTurnFollower("s-1");
    expect(turn.step(event("session.created"))).toEqual({});
    expect(turn.step(event("session.idle"))).toEqual({});
    expect(turn.step(event("session.working"))).toEqual({});
    expect(turn.step(event("message.assistant", "Hello"))).toEqual({ print: "Hello" });
    expect(turn.step(event("status.idle"))).toEqual({});
    expect(turn.step(event("session.turn_ended", "working → idle", { reason: "completed" }))).toEqual({
      end: "turn",
    });
    expect(turn.printed()).toBe(1);
  });

  test("the transcript's messages may come after the turn's end: they never decide it", () => {
    const turn = createTurnFollower("s-1");
    expect(turn.step(event("session.turn_ended"))).toEqual({ end: "turn" });
    expect(turn.step(event("message.user", "say hello"))).toEqual({});
    expect(turn.step(event("message.assistant", "late"))).toEqual({ print: "late" });
  });

  test("other sessions are ignored; an end says how it ended; prompts are pointed out", () => {
    const turn = createTurnFollower("s-1");
    const other = { id: "s-2", name: "two", workDir: "/w" };
    expect(turn.step(event("message.assistant", "not mine", {}, other))).toEqual({});
    const permission = { id: "perm-1", kind: "tool" as const, tool: "Bash", detail: "rm" };
    const asked = turn.step(event("status.permission", "Bash: rm", status("permission_prompt", permission)));
    expect(asked).toMatchObject({ ask: permission, pending: permission });
    expect(asked.note).toBe("waiting for permission: Bash: rm (ag approve s-1 or ag reject s-1)");
    const question = {
      id: "perm-2",
      kind: "question" as const,
      detail: "Which color?",
      question: "Which color?",
      options: [
        { index: 1, label: "Red" },
        { index: 2, label: "Blue" },
      ],
    };
    expect(turn.step(event("status.question", "", status("asking", question))).note).toBe(
      'the agent asks: Which color? — 1. Red · 2. Blue (ag answer s-1 <number>, or --text "…")',
    );
    // A change of state without a prompt withdraws the one asked about.
    expect(turn.step(event("status.working", "", status("working", null)))).toEqual({ pending: null });
    expect(turn.step(event("session.ended", "exit", { reason: "normal" }))).toMatchObject({ end: "ended" });
    expect(turn.step(event("session.ended", "died", { reason: "failed" }))).toMatchObject({ end: "failed" });
  });
});

describe("ag list shows what each session waits for and what it cost", () => {
  const base = {
    id: "1a2b3c4d-0000-4000-8000-000000000001",
    name: "work",
    agent: "claude",
    workDir: "/w",
    createdAt: "2026-01-01T10:00:00.000Z",
    tokenUsage: { input: 100, output: 50, cacheRead: 0, cacheCreation: 0 },
  };
  const now = Date.parse("2026-01-01T10:05:00.000Z");

  test("tokens and cost from the metrics; the pending prompt's summary and the question's options", () => {
    const sessions = [
      {
        ...base,
        status: "permission_prompt",
        pendingPermission: { id: "p", kind: "tool", tool: "Bash", detail: "rm -rf build" },
      },
      {
        ...base,
        id: "2b3c4d5e-0000-4000-8000-000000000002",
        status: "asking",
        pendingPermission: {
          id: "q",
          kind: "question",
          detail: "Which color?",
          question: "Which color?",
          options: [
            { index: 1, label: "Red" },
            { index: 2, label: "Blue" },
          ],
        },
      },
      { ...base, id: "3c4d5e6f-0000-4000-8000-000000000003", status: "idle", pendingPermission: null },
    ] as never;
    const costs = new Map([
      [base.id, { tokens: { input: 12_000, output: 345, cacheRead: 30_000, cacheCreation: 0 }, usd: 0.1234 }],
    ]);
    const rows = sessionRows(sessions, now, false, costs);
    expect(rows[0]).toEqual([
      "1a2b3c4d",
      "work",
      "claude",
      "permission_prompt",
      "5m",
      "42k",
      "$0.12",
      "-",
      "/w",
      "Bash: rm -rf build",
    ]);
    expect(rows[1]!.slice(5)).toEqual(["150", "-", "-", "/w", "Which color? — 1. Red · 2. Blue"]);
    expect(rows[2]!.at(-1)).toBe("");
  });

  test("counts and money read short", () => {
    expect([formatCount(950), formatCount(1234), formatCount(12_345), formatCount(4_200_000)]).toEqual([
      "950",
      "1.2k",
      "12k",
      "4.2M",
    ]);
    expect([formatUsd(0), formatUsd(0.004), formatUsd(1.5)]).toEqual(["$0", "<$0.01", "$1.50"]);
    expect([plural(1, "attempt"), plural(3, "attempt"), plural(2, "empty entry", "empty entries")]).toEqual([
      "1 attempt",
      "3 attempts",
      "2 empty entries",
    ]);
  });
});

describe("ag read leaves out entries with nothing to read", () => {
  const message = (kind: string, text: string) =>
    ({ id: 1, role: "system", kind, text, timestamp: null, uuid: null }) as never;
  test("an empty system line or text block goes; an interrupt or a tool's empty result stays", () => {
    expect(isEmptyMessage(message("system", ""))).toBe(true);
    expect(isEmptyMessage(message("text", "  \n"))).toBe(true);
    expect(isEmptyMessage(message("system", "compacted"))).toBe(false);
    expect(isEmptyMessage(message("interrupt", ""))).toBe(false);
    expect(isEmptyMessage(message("tool_result", ""))).toBe(false);
  });
});

describe("ag run asks at the terminal", () => {
  const session = { id: "1a2b3c4d-0000-4000-8000-000000000001", name: "work", status: "working" } as never;
  const permission = { id: "p1", kind: "tool" as const, tool: "Write", detail: "/w/hello.txt" };
  const question = {
    id: "q1",
    kind: "question" as const,
    detail: "Which color?",
    question: "Which color?",
    options: [
      { index: 1, label: "Red" },
      { index: 2, label: "Blue" },
    ],
  };

  function deps(keys: string[], lines: string[] = []) {
    const notes: string[] = [];
    const calls: unknown[] = [];
    const after = (status: string) => ({ ...(session as object), status, pendingPermission: null }) as never;
    return {
      notes,
      calls,
      deps: {
        decide: async (s: { pendingPermission: unknown }, decision: string) => {
          calls.push([decision, s.pendingPermission]);
          return after("working");
        },
        answerQuestion: async (_: unknown, answer: unknown) => {
          calls.push(["answer", answer]);
          return after("working");
        },
        attach: async () => {
          calls.push(["attach"]);
        },
        note: (text: string) => notes.push(text),
        readKey: async () => keys.shift() ?? null,
        readLine: async () => lines.shift() ?? null,
      },
    };
  }

  test("y approves the prompt it was shown, with its id; n rejects", async () => {
    const yes = deps(["y"]);
    expect(await askAtTerminal(session, permission, new AbortController().signal, yes.deps)).toBe("answered");
    expect(yes.calls).toEqual([["approve", permission]]);
    expect(yes.notes[0]).toBe(
      "allow Write: /w/hello.txt?  [y]es · [n]o · [a]ttach to its terminal · [Enter] later",
    );
    expect(yes.notes[1]).toBe("approved Write: /w/hello.txt in work (now working)");
    const no = deps(["x", "n"]);
    expect(await askAtTerminal(session, permission, new AbortController().signal, no.deps)).toBe("answered");
    expect(no.calls).toEqual([["reject", permission]]);
  });

  test("a question: a number picks the option, t types an answer; a attaches and asks again", async () => {
    const pick = deps(["a", "2"]);
    expect(await askAtTerminal(session, question, new AbortController().signal, pick.deps)).toBe("answered");
    expect(pick.calls).toEqual([["attach"], ["answer", { option: 2 }]]);
    expect(pick.notes[0]).toBe(
      "the agent asks: Which color?\n  1. Red\n  2. Blue\n  [number] pick it · [t]ype an answer · [a]ttach to its terminal · [Enter] later",
    );
    expect(pick.notes.at(-1)).toBe("answered Which color? — 1. Red · 2. Blue in work (now working): 2. Blue");
    const typed = deps(["t"], ["Green please"]);
    await askAtTerminal(session, question, new AbortController().signal, typed.deps);
    expect(typed.calls).toEqual([["answer", { text: "Green please" }]]);
  });

  test("Enter leaves it for later with the commands that answer it; a withdrawn prompt asks nothing", async () => {
    const later = deps(["enter"]);
    expect(await askAtTerminal(session, permission, new AbortController().signal, later.deps)).toBe("later");
    expect(later.notes.at(-1)).toBe("left for later: ag approve 1a2b3c4d or ag reject 1a2b3c4d");
    const gone = deps([]);
    expect(await askAtTerminal(session, question, new AbortController().signal, gone.deps)).toBe("withdrawn");
    expect(gone.calls).toEqual([]);
  });
});

describe("arguments of the verbs", () => {
  test("ag answer takes a number or --text, exactly one", () => {
    expect(parseAnswer("2", undefined)).toEqual({ option: 2 });
    expect(parseAnswer(undefined, "Green")).toEqual({ text: "Green" });
    for (const [option, text] of [
      [undefined, undefined],
      ["2", "Green"],
      ["two", undefined],
      ["0", undefined],
      [undefined, " "],
    ] as const) {
      expect(() => parseAnswer(option, text)).toThrow();
    }
  });

  test("ag send - reads stdin whole: several lines are one message, the last line end is not part of it", async () => {
    expect(await messageText("-", async () => "first line\nsecond line\n\n")).toBe("first line\nsecond line");
    expect(await messageText("hello", async () => "unused")).toBe("hello");
    await expect(messageText("-", async () => "\n")).rejects.toThrow("the message is empty");
  });
});
