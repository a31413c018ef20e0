import { describe, expect, test } from "bun:test";
import {
  decodeAnswer,
  encodeAnswer,
  MAX_CALLBACK_BYTES,
  promptFingerprint,
} from "../../src/channels/chat/callback.ts";
import {
  escapeHtml,
  formatBatch,
  formatStatus,
  isForwarded,
  THINKING_LIMIT,
  TOOL_CODE_LIMIT,
  topicName,
  truncate,
} from "../../src/channels/chat/format.ts";
import type { AgEvent } from "../../src/events/bus.ts";
import type { EventName, EventPayload, PendingPermission } from "../../src/events/names.ts";
import { parseHtml } from "../fakes/bot-api.ts";
import { sampleInput } from "../helpers/events.ts";

const session = { id: "0f8fad5b-d9cb-469f-a165-70867728950e", name: "api <main> & co", workDir: "/srv/a&b" };
let nextId = 1;
function event<N extends EventName>(name: N, detail = "", meta: Partial<EventPayload<N>> = {}): AgEvent<N> {
  const input = sampleInput(name, { session, detail, meta });
  return { ...input, id: nextId++, timestamp: "2026-01-01T00:00:00.000Z" } as AgEvent<N>;
}
/** What a chat client shows for the HTML (the real API's parse, as the fake implements it). */
const shown = (html: string) => parseHtml(html).text;

describe("escaping and truncation", () => {
  test("whatever an agent writes is shown literally, never parsed as markup", () => {
    const hostile = `<b>not bold</b> & &amp; <a href="x">link</a> 1 < 2 > 0`;
    const html = formatBatch([event("message.assistant", hostile)], false);
    expect(shown(html)).toBe(`🤖 ${hostile}`);
    expect(parseHtml(html).entities).toEqual([]);
    expect(escapeHtml("<&>")).toBe("&lt;&amp;&gt;");
  });

  test("session names and work dirs are escaped in the created message", () => {
    const text = shown(formatStatus(event("session.created", "created")).html);
    expect(text).toContain("api <main> & co started");
    expect(text).toContain("/srv/a&b");
    expect(text).toContain(session.id);
  });

  test("truncate counts UTF-16 units as the bot API does, never splits an emoji, and marks the cut", () => {
    expect(truncate("short", 10)).toBe("short");
    expect(truncate("abcdefghij", 5)).toBe("abcd…");
    const emoji = "😀".repeat(10);
    expect(Array.from(truncate(emoji, 6))).toEqual(["😀", "😀", "…"]);
    expect(truncate(emoji, 6).length).toBeLessThanOrEqual(6);
    // 3000 emoji must not become a 6000-unit message (the API's limit is 4096).
    expect(truncate("😀".repeat(3000), 3000).length).toBeLessThanOrEqual(3000);
  });

  test("a topic name fits the API's 128 characters", () => {
    expect(Array.from(topicName("x".repeat(500)))).toHaveLength(128);
    expect(topicName("   ")).toBe("session");
  });
});

describe("what is forwarded (SPEC's verbose rules)", () => {
  test("lifecycle, every status.* and user / assistant / tool-use messages; never events without a session", () => {
    for (const verbose of [false, true]) {
      for (const name of [
        "session.created",
        "session.ended",
        "status.idle",
        "status.permission",
        "status.rate_limited",
        "message.user",
        "message.assistant",
        "message.tool_use",
      ] as const) {
        expect(isForwarded(event(name), verbose)).toBe(true);
      }
      // The SSE names and permission.requested say what a status.* event already says.
      for (const name of [
        "session.idle",
        "session.working",
        "permission.requested",
        "swarm.teammate_spawned",
        "verification",
      ] as const) {
        expect(isForwarded(event(name), verbose)).toBe(false);
      }
      expect(isForwarded({ ...event("status.idle"), session: undefined }, verbose)).toBe(false);
    }
  });

  test("thinking: silent unless verbose, then cut to 800 characters", () => {
    const thought = "t".repeat(2000);
    expect(isForwarded(event("message.thinking", thought), false)).toBe(false);
    expect(formatBatch([event("message.thinking", thought)], false)).toBe("");
    const text = shown(formatBatch([event("message.thinking", thought)], true));
    expect(text).toBe(`💭 ${"t".repeat(THINKING_LIMIT - 1)}…`);
  });

  test("tool use: verbose shows the label and a code block cut to 600 characters", () => {
    const command = `echo ${"x".repeat(1000)}`;
    const html = formatBatch(
      [event("message.tool_use", "Bash", { tool: "Bash", input: { command, description: "Say x" } })],
      true,
    );
    const parsed = parseHtml(html);
    expect(parsed.text).toStartWith("🔧 Bash — Say x\n");
    const code = parsed.text.split("\n")[1]!;
    expect(Array.from(code)).toHaveLength(TOOL_CODE_LIMIT);
    expect(code).toEndWith("…");
    expect(parsed.entities).toContainEqual(expect.objectContaining({ type: "pre", language: "bash" }));
  });

  test("tool use without verbose: progress only — one line naming the tools, repeats counted", () => {
    const tool = (name: string) =>
      event("message.tool_use", name, { tool: name, input: { command: "secret stuff" } });
    const html = formatBatch(
      [tool("Read"), tool("Read"), tool("Bash"), event("message.assistant", "done reading"), tool("Edit")],
      false,
    );
    expect(shown(html)).toBe("🔧 Read ×2 · Bash\n\n🤖 done reading\n\n🔧 Edit");
    expect(html).not.toContain("secret");
  });

  test("tool results only in verbose mode, errors marked", () => {
    expect(isForwarded(event("message.tool_result", "out"), false)).toBe(false);
    expect(shown(formatBatch([event("message.tool_result", "boom", { isError: true })], true))).toBe(
      "❗ boom",
    );
  });

  test("a batch keeps the order of its messages", () => {
    const html = formatBatch(
      [event("message.user", "hi"), event("message.thinking", "hmm"), event("message.assistant", "hello")],
      false,
    );
    expect(shown(html)).toBe("👤 hi\n\n🤖 hello");
  });
});

describe("status messages and permission buttons", () => {
  const pending: PendingPermission = {
    id: "perm-3",
    kind: "tool",
    tool: "Bash",
    detail: "rm -rf build && echo <done>",
  };

  test("a permission prompt shows the tool and command with Approve / Reject buttons", () => {
    const out = formatStatus(event("status.permission", "Bash: rm", { pendingPermission: pending }));
    expect(shown(out.html)).toBe("🔐 Permission: Bash\nrm -rf build && echo <done>");
    const buttons = out.keyboard!.inline_keyboard.flat();
    expect(buttons.map((b) => b.text)).toEqual(["✅ Approve", "❌ Reject"]);
    for (const button of buttons)
      expect(Buffer.byteLength(button.callback_data)).toBeLessThanOrEqual(MAX_CALLBACK_BYTES);
    expect(decodeAnswer(buttons[0]!.callback_data)).toEqual({
      choice: "approve",
      sessionId: session.id,
      permissionId: "perm-3",
      fingerprint: promptFingerprint(pending),
    });
    expect(decodeAnswer(buttons[1]!.callback_data)?.choice).toBe("reject");
  });

  test("a question shows its options as buttons, each answering with its number, and Dismiss", () => {
    const asked: PendingPermission = {
      id: "perm-4",
      kind: "question",
      tool: "AskUserQuestion",
      detail: "Which color?",
      question: "Which color?",
      options: [
        { index: 1, label: "Red" },
        { index: 2, label: "Blue" },
      ],
    };
    const out = formatStatus(event("status.question", "Which color?", { pendingPermission: asked }));
    expect(shown(out.html)).toBe("❓ Question\nWhich color?\n1. Red\n2. Blue");
    const buttons = out.keyboard!.inline_keyboard.flat();
    expect(buttons.map((b) => b.text)).toEqual(["1. Red", "2. Blue", "❌ Dismiss"]);
    expect(decodeAnswer(buttons[1]!.callback_data)).toEqual({
      choice: 2,
      sessionId: session.id,
      permissionId: "perm-4",
      fingerprint: promptFingerprint(asked),
    });
    expect(decodeAnswer(buttons[2]!.callback_data)?.choice).toBe("reject");
  });

  test("a plan to approve has buttons too; other states do not", () => {
    const plan = formatStatus(
      event("status.plan", "plan", {
        pendingPermission: { id: "perm-1", kind: "plan", detail: "1. do\n2. test" },
      }),
    );
    expect(shown(plan.html)).toBe("📋 Plan to approve\n1. do\n2. test");
    expect(plan.keyboard).toBeDefined();
    expect(shown(formatStatus(event("status.idle", "working → idle")).html)).toBe(
      "💤 idle, waiting for a prompt",
    );
    expect(shown(formatStatus(event("status.stall", "working → stalled")).html)).toBe(
      "⏳ stalled\nworking → stalled",
    );
    expect(shown(formatStatus(event("session.ended", "killed", { reason: "killed" })).html)).toBe(
      "🏁 ended (killed)",
    );
  });

  test("a dashboard link ends the message: the URL as its text and its target, escaped in both", () => {
    const link = `https://ag.example.test/d/?team=a&b="c"#/sessions/${session.id}`;
    const out = formatStatus(
      event("status.plan", "plan", { pendingPermission: { id: "perm-1", kind: "plan", detail: "1. do" } }),
      link,
    );
    const parsed = parseHtml(out.html);
    expect(parsed.text).toBe(`📋 Plan to approve\n1. do\n🔗 ${link}`);
    expect(parsed.entities.at(-1)).toEqual({
      type: "text_link",
      offset: parsed.text.indexOf("https"),
      length: link.length,
      url: link,
    });
    // The buttons are the prompt's own, link or not.
    expect(out.keyboard).toEqual(
      formatStatus(
        event("status.plan", "plan", { pendingPermission: { id: "perm-1", kind: "plan", detail: "1. do" } }),
      ).keyboard,
    );
  });

  test("the fingerprint tells a newer prompt with a reused id from the old one", () => {
    expect(promptFingerprint(pending)).not.toBe(promptFingerprint({ ...pending, detail: "ls" }));
    expect(decodeAnswer("a:nothex:perm-1:abc")).toBeNull();
    expect(decodeAnswer("x:0f8fad5bd9cb469fa16570867728950e:perm-1:abc")).toBeNull();
    expect(encodeAnswer("approve", "not-a-uuid", "perm-1", pending)).toBeNull();
    expect(encodeAnswer("approve", session.id, `perm-${"9".repeat(40)}`, pending)).toBeNull();
  });
});

describe("a review's verdict", () => {
  test("goes to the reviewed session's topic: the verdict, who agreed, and the review's page", () => {
    const verdict = event("consensus.completed", "approve: 2 of 3 reviewers agree", { verdict: "approve" });
    expect(isForwarded(verdict, false)).toBe(true);
    const html = formatStatus(verdict, "https://ag.example.test/#/consensus/abc").html;
    expect(shown(html)).toBe(
      "🧑‍⚖️ Review: APPROVE\napprove: 2 of 3 reviewers agree\n🔗 https://ag.example.test/#/consensus/abc",
    );
    const failed = event("consensus.completed", "review failed: no reviewer's answer could be read", {
      status: "failed",
      verdict: null,
    });
    expect(shown(formatStatus(failed).html)).toBe(
      "🧑‍⚖️ Review: no verdict\nreview failed: no reviewer's answer could be read",
    );
  });
});
