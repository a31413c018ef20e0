import { describe, expect, test } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { TranscriptLineMeaning } from "../../src/agents/agent.ts";
import { createCodexTranscriptReader } from "../../src/agents/codex/reader.ts";
import { threadIdOf } from "../../src/agents/codex/threads.ts";
import { codexTranscriptFormat } from "../../src/agents/codex/transcript.ts";
import { createTranscriptIndex } from "../../src/transcript/index.ts";
import { tempDir } from "../helpers/temp.ts";

// The rollout of a real Codex CLI 0.169.0 session (the contract's fixture).
const ROLLOUT = join(import.meta.dir, "..", "fixtures", "agents", "codex", "0.169.0", "rollout.jsonl");
const lines = readFileSync(ROLLOUT, "utf8").split("\n").filter(Boolean);

function readAll(all = lines) {
  const reader = createCodexTranscriptReader();
  const meanings: TranscriptLineMeaning[] = all.map((l) => reader.add(l));
  return { reader, meanings };
}

const line = (type: string, payload: Record<string, unknown>) =>
  JSON.stringify({ timestamp: "2026-11-24T17:00:00.000Z", type, payload });

describe("reading a Codex rollout", () => {
  test("prompts are state evidence, with the turn id the prompt hook carries too", () => {
    const prompts = readAll()
      .meanings.map((m) => m.observation)
      .filter((o) => o?.kind === "prompt-submitted");
    expect(prompts.map((p) => p?.kind === "prompt-submitted" && p.text.split("\n")[0])).toEqual([
      "say hello",
      "run cmd: touch approved.txt",
      "run cmd: touch rejected.txt",
      "edit file",
      "slow 6",
      "hang forever",
      "rate limit",
      "line 1: the quick brown fox jumps over the lazy dog",
      "say hello",
    ]);
    const hooks = readFileSync(ROLLOUT.replace("rollout.jsonl", "hooks.jsonl"), "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l))
      .filter((h) => h.event === "UserPromptSubmit")
      .map((h) => h.payload.turn_id);
    expect(prompts.map((p) => p?.kind === "prompt-submitted" && p.promptId)).toEqual(hooks);
  });

  test("tokens: one record per model response, cached input apart, as Codex's own total says", () => {
    const { reader, meanings } = readAll();
    // Codex's exit screen: "Token usage: total=80,301 input=79,600 (+ 24,318 cached) output=701".
    expect(reader.tokens()).toEqual({ input: 79_600, output: 701, cacheRead: 24_318, cacheCreation: 0 });
    expect(Object.keys(reader.tokensByModel())).toEqual(["gpt-5.5"]);
    const usage = meanings.flatMap((m) => (m.usage ? [m.usage] : []));
    expect(usage).toHaveLength(9);
    expect(new Set(usage.map((u) => u.messageId)).size).toBe(9);
    // The same record again is not counted twice.
    const repeated = lines.find((l) => l.includes('"token_usage_record"'))!;
    reader.add(repeated);
    expect(reader.tokens().output).toBe(701);
  });

  test("/read: the latest turn's answer; its end is written down", () => {
    const { reader } = readAll();
    expect(reader.output()).toBe("Hello from the mock model! 👋");
    expect(reader.turnEnded()).toBe(true);
    const next = line("response_item", {
      type: "message",
      role: "user",
      content: [{ type: "input_text", text: "next" }],
      internal_chat_message_metadata_passthrough: {
        turn_id: "t9",
        content_item_metadata: [{ provenance: { type: "user" } }],
      },
    });
    reader.add(next);
    expect(reader.output()).toBe("");
    expect(reader.turnEnded()).toBe(false);
  });

  test("an API error ends the turn and is its answer; an interrupt ends it too", () => {
    const upToError = lines.slice(0, lines.findIndex((l) => l.includes("exceeded retry limit")) + 1);
    const { reader } = readAll(upToError);
    expect(reader.turnEnded()).toBe(true);
    expect(reader.output()).toMatch(/^exceeded retry limit, last status: 429/);
    const upToInterrupt = lines.slice(0, lines.findIndex((l) => l.includes('"turn_aborted"')) + 1);
    expect(readAll(upToInterrupt).reader.turnEnded()).toBe(true);
  });

  test("the summary: turns, tool calls by Codex's names, a refused call as an error, files patched", () => {
    expect(readAll().reader.summary()).toMatchObject({
      turns: 9,
      toolCalls: 3,
      toolCallsByName: { exec_command: 2, apply_patch: 1 },
      toolErrors: 1,
      filesTouched: ["/home/user/project/hello.txt"],
      lastUserMessage: "say hello",
      lastAssistantMessage: "Hello from the mock model! 👋",
    });
  });

  test("message events: prompts, answers, tool calls with their input clipped, results", () => {
    const events = readAll().meanings.flatMap((m) => m.messages);
    expect(events.filter((e) => e.event === "message.user")).toHaveLength(9);
    const call = events.find((e) => e.event === "message.tool_use" && e.detail === "apply_patch");
    expect(call?.meta).toMatchObject({
      tool: "apply_patch",
      input: { input: expect.stringContaining("hello.txt") },
    });
    expect(events.filter((e) => e.event === "message.tool_result")).toHaveLength(3);
  });

  test("Codex's own context messages and bookkeeping are no prompts, and unreadable lines nothing", () => {
    const reader = createCodexTranscriptReader();
    const context = line("response_item", {
      type: "message",
      role: "user",
      content: [
        { type: "input_text", text: "<environment_context>\n  <cwd>/w</cwd>\n</environment_context>" },
      ],
    });
    expect(reader.add(context).observation).toEqual({ kind: "activity" });
    expect(reader.add("{not json").messages).toEqual([]);
    expect(reader.add(line("world_state", { full: true })).messages).toEqual([]);
    expect(reader.summary().turns).toBe(0);
  });
});

/** The lines with the one at `from` written just before the one at `before` instead. */
function moved(all: readonly string[], from: number, before: number): string[] {
  const rest = all.filter((_, i) => i !== from);
  const at = rest.indexOf(all[before]!);
  return [...rest.slice(0, at), all[from]!, ...rest.slice(at)];
}

describe("a rollout written out of order: the answer is read by turn id and ordinal, not line order", () => {
  const index = (text: string, kind = "") => lines.findLastIndex((l) => l.includes(text) && l.includes(kind));
  const lastPrompt = index('"say hello"', '"role":"user"');
  const lastAnswer = index("Hello from the mock model!", '"role":"assistant"');
  const lastStart = index('"task_started"');

  test("the latest answer written above its prompt (and its turn's start) is still its answer", () => {
    expect(lastAnswer).toBeGreaterThan(lastPrompt);
    const { reader } = readAll(moved(lines, lastAnswer, lastStart));
    expect(reader.output()).toBe("Hello from the mock model! 👋");
    expect(reader.turnEnded()).toBe(true);
    expect(reader.summary().lastUserMessage).toBe("say hello");
  });

  test("an earlier turn's late answer, written after the next prompt, is not the next turn's", () => {
    const earlier = index("Mock reply to: line 1", '"role":"assistant"');
    const { reader } = readAll(moved(lines, earlier, lastAnswer));
    expect(reader.output()).toBe("Hello from the mock model! 👋");
  });

  test("an earlier turn's late end does not end the turn under way", () => {
    const earlierEnd = lines.findLastIndex((l, i) => i < lastStart && l.includes('"task_complete"'));
    // Up to the latest prompt, the earlier turn's task_complete read last.
    const upToPrompt = lines.slice(0, lastPrompt + 1).filter((_, i) => i !== earlierEnd);
    const { reader } = readAll([...upToPrompt, lines[earlierEnd]!]);
    expect(reader.output()).toBe("");
    expect(reader.turnEnded()).toBe(false);
    reader.add(lines[lastAnswer]!);
    reader.add(lines.find((l, i) => i > lastAnswer && l.includes('"task_complete"'))!);
    expect([reader.output(), reader.turnEnded()]).toEqual(["Hello from the mock model! 👋", true]);
  });

  test("an API error's turn: its error is the answer, though written before the turn's prompt", () => {
    const error = index("exceeded retry limit");
    const upToError = lines.slice(0, error + 1);
    const start = upToError.findLastIndex((l) => l.includes('"task_started"'));
    const { reader } = readAll(moved(upToError, error, start));
    expect(reader.output()).toMatch(/^exceeded retry limit, last status: 429/);
    expect(reader.turnEnded()).toBe(true);
  });
});

describe("the cursor's view of a rollout", () => {
  test("message entries only, with stable ids: prompts, answers, calls, results, interrupts, errors", async () => {
    const index = createTranscriptIndex(ROLLOUT, codexTranscriptFormat);
    await index.scan();
    const page = await index.page({ limit: 200 });
    expect(page.messages.map((m) => m.id)).toEqual(Array.from({ length: 25 }, (_, i) => i + 1));
    const kinds = page.messages.map((m) => `${m.role}/${m.kind}`);
    expect(kinds.slice(0, 6)).toEqual([
      "user/prompt",
      "assistant/text",
      "user/prompt",
      "assistant/tool_use",
      "user/tool_result",
      "assistant/text",
    ]);
    expect(kinds.filter((k) => k === "user/interrupt")).toHaveLength(2);
    const error = page.messages.find((m) => m.kind === "api_error");
    expect(error).toMatchObject({ role: "assistant", isError: true });
    const patch = page.messages.find((m) => m.toolName === "apply_patch");
    expect(patch?.toolInput).toEqual({ input: expect.stringContaining("*** Add File: hello.txt") });
    const refused = page.messages.find((m) => m.kind === "tool_result" && m.isError);
    expect(refused?.text).toContain("aborted by user");
  });
});

describe("a rollout's thread", () => {
  test("from its name, else from its first line", async () => {
    expect(
      await threadIdOf(
        "/h/.codex/sessions/2026/11/24/rollout-2026-11-24T17-45-05-01a20ea9-4c77-7da3-b65f-010e1a946965.jsonl",
      ),
    ).toBe("01a20ea9-4c77-7da3-b65f-010e1a946965");
    const renamed = join(tempDir(), "conversation.jsonl");
    writeFileSync(renamed, `${lines[0]}\n`);
    expect(await threadIdOf(renamed)).toBe("01a20ea9-4c77-7da3-b65f-010e1a946965");
    expect(await threadIdOf(join(tempDir(), "missing.jsonl"))).toBeNull();
  });
});
