import { describe, expect, test } from "bun:test";
import { beforeIdOfPage } from "../../src/cli/commands/read.ts";
import { createSseParser, type StreamedEvent } from "../../src/cli/events.ts";
import { colourEnabled, formatAge, formatTable, paint, startSpinner } from "../../src/cli/output.ts";
import { createTurnFollower } from "../../src/cli/turn.ts";
import { eventLine, messageLines } from "../../src/cli/views.ts";
import { formatEvent, formatGap } from "../../src/events/sse.ts";
import { SAMPLE_PAYLOADS } from "../helpers/events.ts";

const SESSION = { id: "s-1", name: "one", workDir: "/w" };

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
    expect(eventLine(event("status.dead", "gone"), false)).not.toContain("\u001b");
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

  test("an event is one line: time, name, detail with its newlines folded", () => {
    const line = eventLine(event("message.assistant", "one\ntwo"), false);
    expect(line).toMatch(/^\d\d:\d\d:\d\d {2}message\.assistant {5}one ⏎ two$/);
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
    expect(turn.step(event("status.permission", "Bash: rm")).note).toBe(
      "waiting for permission: Bash: rm (POST /v1/sessions/s-1/approve or /v1/sessions/s-1/reject)",
    );
    expect(turn.step(event("status.question", "Which color? — 1. Red · 2. Blue")).note).toBe(
      'the agent asks: Which color? — 1. Red · 2. Blue (POST /v1/sessions/s-1/answer {"option": N} or {"text": "…"})',
    );
    expect(turn.step(event("session.ended", "exit", { reason: "normal" }))).toEqual({ end: "ended" });
    expect(turn.step(event("session.ended", "died", { reason: "failed" }))).toEqual({ end: "failed" });
  });
});
