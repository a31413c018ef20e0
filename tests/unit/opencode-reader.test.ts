import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { AgentObservation } from "../../src/agents/agent.ts";
import { readHook } from "../../src/agents/opencode/hooks.ts";
import { createOpenCodeReader } from "../../src/agents/opencode/reader.ts";

const FIXTURES = join(import.meta.dir, "..", "fixtures", "agents", "opencode", "1.18.33");
const lines = readFileSync(join(FIXTURES, "conversation.jsonl"), "utf8").split("\n").filter(Boolean);
const line = (fields: Record<string, unknown>) =>
  JSON.stringify({ session: "ses_1", at: "2026-01-01T00:00:00.000Z", ...fields });

describe("OpenCode's conversation file, read", () => {
  test("the captured session: turns, tool calls by name, files, errors, tokens by model", () => {
    const reader = createOpenCodeReader();
    const usage = lines.map((l) => reader.add(l).usage).filter(Boolean);
    const summary = reader.summary();
    expect(summary.turns).toBe(12);
    expect(summary.toolCallsByName).toEqual({ bash: 2, write: 1, question: 2 });
    // The write was refused, the policy refused a command, a question was dismissed.
    expect(summary.toolErrors).toBe(3);
    expect(summary.filesTouched).toEqual([expect.stringMatching(/\/work\/hello\.txt$/)]);
    expect(summary.lastUserMessage).toBe("say hello");
    expect(summary.lastAssistantMessage).toBe("Hello from the mock model! 👋");
    expect(reader.output()).toBe("Hello from the mock model! 👋");
    const total = usage.reduce((n, u) => n + u!.tokens.input, 0);
    expect(reader.tokens().input).toBe(total);
    expect(Object.keys(reader.tokensByModel())).toEqual(["claude-sonnet-4-5"]);
  });

  test("a turn ends with its turn_end line; an API error is the turn's output", () => {
    const reader = createOpenCodeReader();
    reader.add(line({ id: "p", role: "user", kind: "prompt", text: "bad request" }));
    expect(reader.turnEnded()).toBe(false);
    reader.add(
      line({ id: "e", role: "assistant", kind: "api_error", text: "Invalid request (mock)", status: 400 }),
    );
    reader.add(line({ id: "t", role: "system", kind: "system", subtype: "turn_end" }));
    expect(reader.turnEnded()).toBe(true);
    expect(reader.output()).toBe("Invalid request (mock)");
  });

  test("only a person's new prompt is evidence; a fork's copies and a sub-agent's lines are not", () => {
    const reader = createOpenCodeReader();
    const kind = (fields: Record<string, unknown>) => reader.add(line(fields)).observation?.kind;
    expect(kind({ id: "a", role: "user", kind: "prompt", text: "old", message: "m0", copied: true })).toBe(
      "activity",
    );
    expect(
      reader.add(line({ id: "a2", role: "assistant", kind: "text", text: "old answer", copied: true }))
        .messages,
    ).toEqual([]);
    expect(kind({ id: "b", role: "user", kind: "prompt", text: "do it", sidechain: true })).toBe("activity");
    expect(
      reader.add(line({ id: "c", role: "user", kind: "prompt", text: "new", message: "m1" })).observation,
    ).toEqual({
      kind: "prompt-submitted",
      text: "new",
      promptId: "m1",
    });
    // The sub-agent's turn end is not the conversation's.
    reader.add(line({ id: "d", role: "system", kind: "system", subtype: "turn_end", sidechain: true }));
    expect(reader.turnEnded()).toBe(false);
    expect(reader.summary().turns).toBe(2);
  });

  test("a usage line read twice counts once", () => {
    const reader = createOpenCodeReader();
    const usage = line({
      id: "u",
      type: "usage",
      model: "m",
      tokens: { input: 5, output: 2, cacheRead: 1, cacheCreation: 0 },
    });
    reader.add(usage);
    expect(reader.add(usage).usage).toBeUndefined();
    expect(reader.tokens()).toEqual({ input: 5, output: 2, cacheRead: 1, cacheCreation: 0 });
  });
});

describe("OpenCode's hooks, read", () => {
  const hooks = readFileSync(join(FIXTURES, "hooks.jsonl"), "utf8")
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l) as { event: string; payload: Record<string, unknown> });

  test("every captured hook names the conversation and its file", () => {
    for (const { event, payload } of hooks) {
      const reading = readHook(event, payload);
      expect(reading.conversationId).toMatch(/^ses_/);
      expect(reading.transcriptPath).toMatch(/conversation\.jsonl$/);
    }
  });

  test("dialogs: the command or file a permission is about; a question with its options", () => {
    const permissions = hooks
      .filter((h) => h.event === "permission.asked")
      .map(
        (h) =>
          (readHook(h.event, h.payload).observation as Extract<AgentObservation, { kind: "permission" }>)
            .request,
      );
    expect(permissions).toEqual([
      { kind: "tool", tool: "bash", detail: "touch approved.txt" },
      { kind: "tool", tool: "write", detail: expect.stringMatching(/\/work\/hello\.txt$/) },
    ]);
    const asked = hooks.find((h) => h.event === "question.asked")!;
    expect(readHook(asked.event, asked.payload).observation).toMatchObject({
      kind: "permission",
      request: {
        kind: "question",
        question: "Which color should the button be?",
        options: [{ label: "Red" }, { label: "Blue" }],
      },
    });
  });

  test("a sub-agent's hooks are activity, but its dialogs are the session's", () => {
    const sub = { sessionID: "ses_child", parentID: "ses_main" };
    expect(readHook("session.idle", sub)).toEqual({ observation: { kind: "activity" } });
    expect(readHook("chat.message", { ...sub, text: "explore" }).observation).toEqual({ kind: "activity" });
    expect(
      readHook("permission.asked", { ...sub, permission: "bash", metadata: { command: "ls" } }).observation,
    ).toMatchObject({
      kind: "permission",
    });
  });

  test("errors: rate limits are told apart; an interrupt or a refusal ends nothing by itself", () => {
    const error = (statusCode: number, message: string) => ({
      error: { name: "APIError", data: { statusCode, message } },
    });
    expect(readHook("session.error", error(429, "Too many")).observation).toEqual({
      kind: "turn-failed",
      error: "Too many",
      rateLimited: true,
    });
    expect(readHook("session.error", error(500, "Internal")).observation).toMatchObject({
      rateLimited: false,
    });
    expect(readHook("session.error", { error: { name: "MessageAbortedError" } }).observation).toBeNull();
    expect(readHook("permission.replied", { reply: "reject" }).observation).toBeNull();
  });
});
