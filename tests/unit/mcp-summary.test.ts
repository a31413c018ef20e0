import { describe, expect, test } from "bun:test";
import { describeSession, describeSessions, summarize } from "../../src/mcp/summary.ts";
import { hintsFor } from "../../src/sessions/insight.ts";

const base = { id: "s1", name: "app-s1", workDir: "/w", pendingPermission: null };

describe("the summary an agent reads before the JSON", () => {
  test("a permission prompt names the tool, the detail and approve_permission/reject_permission", () => {
    const text = describeSession({
      ...base,
      status: "permission_prompt",
      pendingPermission: { id: "p1", kind: "tool", tool: "Edit", detail: "/w/notes.txt" },
    });
    expect(text).toBe(
      'Session "app-s1" (s1) is permission_prompt. It waits for permission for Edit: /w/notes.txt. Next: call approve_permission or reject_permission (sessionId "s1").',
    );
  });

  test("a question lists its options and names answer_question with their range", () => {
    const text = describeSession({
      ...base,
      status: "asking",
      pendingPermission: {
        id: "q1",
        kind: "question",
        detail: "Pick a color",
        question: "Which color?",
        options: [
          { index: 1, label: "Red" },
          { index: 2, label: "Blue" },
        ],
      },
    });
    expect(text).toContain('It waits for a question: "Which color?" (options: 1. Red, 2. Blue).');
    expect(text).toContain('Next: call answer_question (sessionId "s1") with option 1–2 or text of your own');
  });

  test.each([
    ["idle", "Next: call send_message"],
    ["working", "Next: wait, then call get_status"],
    ["stalled", "interrupt_session"],
    ["killed", "Next: get_transcript"],
    ["crashed", "create_session"],
  ])("%s says what to call next, never a REST route", (status, next) => {
    const text = describeSession({ ...base, status });
    expect(text).toStartWith(`Session "app-s1" (s1) is ${status}.`);
    expect(text).toContain(next);
    expect(text).not.toContain("/v1/");
  });

  test("a reused session says so", () => {
    expect(describeSession({ ...base, status: "working", reused: true })).toStartWith(
      'Session "app-s1" (s1) (an idle session reused) is working.',
    );
  });

  test("lists, deliveries, batches and health are summarized; other bodies are not", () => {
    expect(describeSessions([])).toBe("No sessions. Next: call create_session to start one.");
    expect(summarize({}, [{ ...base, status: "idle" }])).toStartWith(
      '1 session:\n- Session "app-s1" (s1) is idle.',
    );
    expect(summarize({ sessionId: "s1" }, { delivered: true, attempts: 1 })).toStartWith(
      'Delivered to session s1 (attempt 1). Next: call get_status (sessionId "s1")',
    );
    expect(summarize({}, { created: [{ ...base, status: "idle" }], failed: [] })).toStartWith(
      "1 created, 0 failed.\n- Session",
    );
    expect(
      summarize(
        { sessionId: "s1" },
        { id: "s1", status: "idle", alive: true, hints: ["ready for a prompt: call send_message"] },
      ),
    ).toBe("Session s1 is idle. ready for a prompt: call send_message");
    expect(summarize({ key: "a/b" }, { key: "a/b", value: "v" })).toBeNull();
    expect(summarize({ sessionId: "s1" }, { id: "s1", content: "❯" })).toBeNull();
  });
});

describe("hints for MCP readers name tools", () => {
  test.each([
    ["permission_prompt", "approve_permission or reject_permission"],
    ["asking", "answer_question"],
    ["stalled", "interrupt_session"],
    ["idle", "send_message"],
    ["working", "get_status"],
    ["crashed", "get_transcript"],
    ["killed", "get_transcript"],
  ] as const)("%s → %s", (status, toolName) => {
    const hints = hintsFor({ id: "s1", status, pendingPermission: null }, 5000, "mcp").join(" ");
    expect(hints).toContain(toolName);
    expect(hints).not.toContain("/v1/");
  });
});
