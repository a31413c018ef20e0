import { describe, expect, test } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { factsOfBytes, geminiTranscriptFormat } from "../../src/agents/gemini/format.ts";
import { createGeminiTranscriptReader } from "../../src/agents/gemini/reader.ts";
import { factsOf, parseSessionLine } from "../../src/agents/gemini/session-file.ts";
import { createTranscriptIndex } from "../../src/transcript/index.ts";
import { tempDir } from "../helpers/temp.ts";

/**
 * The Gemini CLI's session file rewrites what it wrote (upserts by id, `$set.messages`, copies
 * of the history after a refused tool): the cursor and the reader see each message once.
 */
const FIXTURE = join(import.meta.dir, "../fixtures/agents/gemini/0.61.0/session.jsonl");
const fixtureLines = () => readFileSync(FIXTURE, "utf8").split("\n").filter(Boolean);

const line = (record: Record<string, unknown>) => JSON.stringify(record);
const header = line({ sessionId: "s-1", projectHash: "h", startTime: "2026-01-01T00:00:00Z", kind: "main" });
const prompt = (id: string, text: string) =>
  line({ id, timestamp: "2026-01-01T00:00:01Z", type: "user", content: [{ text }] });
const tokens = { input: 1000, output: 20, cached: 400, thoughts: 5, tool: 0, total: 1025 };
const reply = (id: string, content: string, extra: Record<string, unknown> = {}) =>
  line({
    id,
    timestamp: "2026-01-01T00:00:02Z",
    type: "gemini",
    content,
    thoughts: [],
    tokens,
    model: "gemini-2.5-flash",
    ...extra,
  });
const call = (status: string) => ({
  id: "run_shell_command__1",
  name: "run_shell_command",
  args: { command: "touch x" },
  status,
});
const result = (id: string) =>
  line({
    id,
    timestamp: "2026-01-01T00:00:03Z",
    type: "user",
    content: [
      {
        functionResponse: {
          id: "run_shell_command__1",
          name: "run_shell_command",
          response: { output: "done" },
        },
      },
    ],
  });
const set = (updates: Record<string, unknown>) => line({ $set: updates });

async function pageOf(lines: string[]) {
  const path = join(tempDir(), "session.jsonl");
  writeFileSync(path, `${lines.join("\n")}\n`);
  const index = createTranscriptIndex(path, geminiTranscriptFormat);
  await index.scan();
  return (await index.page({ limit: 200 })).messages;
}

describe("the session file, read from its bytes as from its JSON", () => {
  test("every line of a real session file gives the same facts both ways", () => {
    for (const text of fixtureLines())
      expect(factsOfBytes(new TextEncoder().encode(text))).toEqual(factsOf(parseSessionLine(text)));
  });
});

describe("the cursor over a session file", () => {
  test("a message written again is one entry, shown as its newest line; its tool calls are a second one", async () => {
    const messages = await pageOf([
      header,
      set({ messages: [] }),
      prompt("p1", "edit it"),
      set({ lastUpdated: "x" }),
      reply("r1", "I'll do it."),
      reply("r1", "I'll do it.", { toolCalls: [call("success")] }),
      result("t1"),
      reply("r2", "Done."),
      reply("r2", "Done."), // its tokens written again
    ]);
    expect(messages.map((m) => [m.id, m.role, m.kind, m.text])).toEqual([
      [1, "user", "prompt", "edit it"],
      [2, "assistant", "text", "I'll do it."],
      [3, "assistant", "tool_use", '{"command":"touch x"}'],
      [4, "user", "tool_result", "done"],
      [5, "assistant", "text", "Done."],
    ]);
    expect(messages[2]).toMatchObject({
      toolName: "run_shell_command",
      toolUseId: "run_shell_command__1",
      messageId: "r1",
    });
  });

  test("a reply with nothing yet waits for its tool calls: no empty entry", async () => {
    const messages = await pageOf([
      header,
      prompt("p1", "run"),
      reply("r1", ""),
      reply("r1", "", { toolCalls: [call("cancelled")] }),
    ]);
    expect(messages.map((m) => m.kind)).toEqual(["prompt", "tool_use"]);
  });

  test("the history the CLI writes anew after a refusal (new ids, parts) adds nothing; what follows does", async () => {
    const copy = (id: string, type: string, content: unknown) => line({ id, timestamp: "t", type, content });
    const messages = await pageOf([
      header,
      prompt("p1", "say hello"),
      reply("r1", "Hello"),
      prompt("p2", "run cmd: touch x"),
      reply("r2", "", { toolCalls: [call("cancelled")] }),
      line({ id: "i1", timestamp: "t", type: "info", content: "Request cancelled." }),
      copy("c1", "user", [{ text: "<session_context>\nThis is the Gemini CLI." }, { text: "say hello" }]),
      copy("c2", "gemini", [{ text: "Hello" }]),
      set({ messages: [{ id: "c1" }, { id: "c2" }], lastUpdated: "t" }),
      prompt("p3", "say hello"),
      reply("r3", "Hello again"),
    ]);
    expect(messages.map((m) => `${m.kind}:${m.text}`)).toEqual([
      "prompt:say hello",
      "text:Hello",
      "prompt:run cmd: touch x",
      'tool_use:{"command":"touch x"}',
      "interrupt:Request cancelled.",
      "prompt:say hello",
      "text:Hello again",
    ]);
  });

  test("the real file: every prompt once, in order; the refused call and the API error as they happened", async () => {
    const messages = await pageOf(fixtureLines());
    expect(messages.filter((m) => m.kind === "prompt").map((m) => m.text)).toEqual([
      "slow 6",
      "run cmd: touch approved.txt",
      "run cmd: touch rejected.txt",
      "edit file",
      "ask me",
      "slow 30",
      "bad request",
      "say hello",
    ]);
    expect(messages.filter((m) => m.kind === "tool_use").map((m) => m.toolName)).toEqual([
      "run_shell_command",
      "run_shell_command",
      "write_file",
      "ask_user",
    ]);
    expect(messages.filter((m) => m.kind === "api_error")).toHaveLength(1);
    expect(messages.filter((m) => m.kind === "interrupt")).toHaveLength(2);
    expect(new Set(messages.map((m) => `${m.uuid}/${m.kind}`)).size).toBe(messages.length);
  });
});

describe("tokens", () => {
  test("each message counts once with its final figures, cached input apart, thoughts as output", () => {
    const reader = createGeminiTranscriptReader();
    const usage = [
      prompt("p1", "go"),
      reply("r1", "", { tokens: null }),
      reply("r1", "", { tokens, toolCalls: [call("success")] }),
      reply("r1", "", { tokens, toolCalls: [call("success")] }),
    ].map((text) => reader.add(text).usage);
    expect(usage.filter(Boolean)).toHaveLength(2);
    expect(reader.tokens()).toEqual({ input: 600, output: 25, cacheRead: 400, cacheCreation: 0 });
    expect(reader.tokensByModel()).toEqual({
      "gemini-2.5-flash": { input: 600, output: 25, cacheRead: 400, cacheCreation: 0 },
    });
  });

  test("the real file's totals: its 9 replies, each once (6,187 + … + 6,772 input tokens)", () => {
    const reader = createGeminiTranscriptReader();
    for (const text of fixtureLines()) reader.add(text);
    expect(reader.tokens()).toEqual({ input: 58_666, output: 315, cacheRead: 0, cacheCreation: 0 });
  });
});
