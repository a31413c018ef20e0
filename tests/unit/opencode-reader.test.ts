import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { AgentObservation } from "../../src/agents/agent.ts";
import { orderOf } from "../../src/agents/opencode/conversation.ts";
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

  test("written out of order, each line is read in its own turn, by OpenCode's message ids", () => {
    const at = (text: string) => lines.findLastIndex((l) => l.includes(text));
    const read = (all: string[]) => {
      const reader = createOpenCodeReader();
      for (const l of all) reader.add(l);
      return reader;
    };
    /** The lines with the one at `from` written just before the one at `before` instead. */
    const moved = (from: number, before: number, all = lines) => {
      const rest = all.filter((_, i) => i !== from);
      const to = rest.indexOf(all[before]!);
      return [...rest.slice(0, to), all[from]!, ...rest.slice(to)];
    };
    const lastPrompt = at('"text":"say hello"');
    const lastReply = at("Hello from the mock model!");
    // The latest reply written above its prompt: still its answer; its turn ends.
    const above = read(moved(lastReply, lastPrompt));
    expect([above.output(), above.turnEnded()]).toEqual(["Hello from the mock model! 👋", true]);
    expect(above.summary().lastUserMessage).toBe("say hello");
    // An earlier turn's reply written after the latest prompt: not the latest answer.
    const late = read(moved(at("streamed slowly"), lastReply));
    expect(late.output()).toBe("Hello from the mock model! 👋");
    // An earlier turn's end read after the latest prompt: the latest turn is still under way.
    const upToPrompt = lines.slice(0, lastPrompt + 1);
    const end = upToPrompt.findLastIndex((l) => l.includes('"turn_end"'));
    const open = read([...upToPrompt.filter((_, i) => i !== end), upToPrompt[end]!]);
    expect([open.output(), open.turnEnded()]).toEqual(["", false]);
  });

  test("a message id's time: its creation ms (48 bits, wrapping), placed by when its line was written", () => {
    const idOf = (ms: number, counter: number) =>
      `msg_${((ms * 4096 + counter) % 2 ** 48).toString(16).padStart(12, "0")}abcdefghijklmn`;
    const made = Date.parse("2026-11-24T17:55:20.652Z");
    const written = new Date(made + 90).toISOString();
    expect(orderOf({ message: idOf(made, 1), at: written })).toBe(made + 1 / 4096);
    expect(orderOf({ message: idOf(made, 2), at: written })).toBeGreaterThan(made + 1 / 4096);
    // Made just before its 48 bits wrap, written just after.
    const wrap = 2 ** 36 * Math.ceil(made / 2 ** 36);
    expect(orderOf({ message: idOf(wrap - 5, 3), at: new Date(wrap + 20).toISOString() })).toBe(
      wrap - 5 + 3 / 4096,
    );
    // No message id: when it was written, after anything made in that ms.
    expect(orderOf({ message: null, at: written })).toBe(made + 90 + 4095 / 4096);
    expect(orderOf({ message: null, at: null })).toBeNull();
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
