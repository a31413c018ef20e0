import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { TranscriptLineMeaning } from "../../src/agents/agent.ts";
import { createGeminiTranscriptReader } from "../../src/agents/gemini/reader.ts";

/** The Gemini CLI's session file as events, state evidence, `/read` and the summary. */
const FIXTURE = join(import.meta.dir, "../fixtures/agents/gemini/0.61.0/session.jsonl");

function readAll(): {
  reader: ReturnType<typeof createGeminiTranscriptReader>;
  meanings: TranscriptLineMeaning[];
} {
  const reader = createGeminiTranscriptReader();
  const meanings = readFileSync(FIXTURE, "utf8")
    .split("\n")
    .filter(Boolean)
    .map((line) => reader.add(line));
  return { reader, meanings };
}

const events = (meanings: TranscriptLineMeaning[]) => meanings.flatMap((m) => m.messages);

describe("the Gemini transcript reader", () => {
  test("each prompt, reply, tool call and result is one event, however often the file rewrites it", () => {
    const all = events(readAll().meanings);
    const count = (name: string) => all.filter((e) => e.event === name).length;
    expect(count("message.user")).toBe(8);
    expect(count("message.tool_use")).toBe(4);
    // The refused call has no result; the answered question's is {"answers":…}.
    expect(count("message.tool_result")).toBe(3);
    expect(all.filter((e) => e.event === "message.tool_use").map((e) => e.detail)).toEqual([
      "run_shell_command",
      "run_shell_command",
      "write_file",
      "ask_user",
    ]);
    const answer = all.find((e) => e.event === "message.tool_result" && e.detail.includes("answers"));
    expect(answer?.meta).toMatchObject({ toolUseId: expect.stringContaining("ask_user"), isError: false });
    expect(all.filter((e) => e.event === "message.assistant").map((e) => e.detail)).toContain(
      "Hello from the mock model! 👋",
    );
  });

  test("state evidence: the prompts, and the API error that ended its turn", () => {
    const observations = readAll()
      .meanings.map((m) => m.observation)
      .filter((o) => o && o.kind !== "activity");
    expect(observations.map((o) => o!.kind)).toEqual([
      ...Array(7).fill("prompt-submitted"),
      "turn-failed",
      "prompt-submitted",
    ]);
    expect(observations[7]).toMatchObject({
      error: expect.stringContaining("Invalid request (mock)"),
      rateLimited: false,
    });
  });

  test("/read is the latest turn's reply; the turn's end is written down", () => {
    const { reader } = readAll();
    expect(reader.output()).toBe("Hello from the mock model! 👋");
    expect(reader.turnEnded()).toBe(true);
  });

  test("a turn is open from its prompt until a reply without tool calls, a refusal, a cancel or an error", () => {
    const reader = createGeminiTranscriptReader();
    const add = (record: Record<string, unknown>) =>
      reader.add(JSON.stringify({ timestamp: "t", ...record }));
    add({ id: "p", type: "user", content: [{ text: "edit file" }] });
    expect(reader.turnEnded()).toBe(false);
    add({ id: "r", type: "gemini", content: "", thoughts: [] });
    expect(reader.turnEnded()).toBe(false);
    const write = { id: "c", name: "write_file", args: { file_path: "/w/a.txt" }, status: "success" };
    add({ id: "r", type: "gemini", content: "", thoughts: [], toolCalls: [write] });
    expect(reader.turnEnded()).toBe(false);
    add({ id: "r2", type: "gemini", content: "Wrote it.", thoughts: [] });
    expect(reader.turnEnded()).toBe(true);
    add({ id: "p2", type: "user", content: [{ text: "slow 30" }] });
    add({ id: "i", type: "info", content: "Request cancelled." });
    expect(reader.turnEnded()).toBe(true);
    expect(reader.output()).toBe("");
    expect(reader.summary()).toMatchObject({
      turns: 2,
      toolCalls: 1,
      filesTouched: ["/w/a.txt"],
      lastUserMessage: "slow 30",
    });
  });

  test("written out of order, each message is read in its own turn, by its timestamp", () => {
    const lines = readFileSync(FIXTURE, "utf8").split("\n").filter(Boolean);
    const at = (text: string) => lines.findIndex((l) => l.includes(text));
    const read = (all: string[]) => {
      const reader = createGeminiTranscriptReader();
      for (const line of all) reader.add(line);
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
    // The latest reply written above its prompt: still its answer, and its turn ended.
    const above = read(moved(lastReply, lastPrompt));
    expect([above.output(), above.turnEnded()]).toEqual(["Hello from the mock model! 👋", true]);
    expect(above.summary().lastUserMessage).toBe("say hello");
    // An earlier turn's reply written after the next prompt: not the next turn's answer.
    const late = read(moved(at("Thanks for answering"), lastReply));
    expect(late.output()).toBe("Hello from the mock model! 👋");
    // An earlier turn's cancel, read after the latest prompt: the latest turn is still under way.
    const upToPrompt = lines.slice(0, lastPrompt + 1);
    const cancel = upToPrompt.findLastIndex((l) => l.includes("Request cancelled."));
    const open = read([...upToPrompt.filter((_, i) => i !== cancel), upToPrompt[cancel]!]);
    expect([open.output(), open.turnEnded()]).toEqual(["", false]);
  });

  test("the summary: counts by role, tools by name, times", () => {
    const summary = readAll().reader.summary();
    expect(summary).toMatchObject({
      turns: 8,
      toolCalls: 4,
      toolCallsByName: { run_shell_command: 2, write_file: 1, ask_user: 1 },
      filesTouched: ["/home/user/project/hello.txt"],
      lastUserMessage: "say hello",
      lastAssistantMessage: "Hello from the mock model! 👋",
    });
    expect(summary.messages.user).toBe(8 + 3);
    expect(summary.durationMs).toBeGreaterThan(0);
  });

  test("a 429 that surfaces (after the CLI's retries) is a rate limit", () => {
    const reader = createGeminiTranscriptReader();
    const meaning = reader.add(
      JSON.stringify({
        id: "e",
        timestamp: "t",
        type: "error",
        content: '[API Error: {"error":{"code":429,"status":"RESOURCE_EXHAUSTED"}}]',
      }),
    );
    expect(meaning.observation).toMatchObject({ kind: "turn-failed", rateLimited: true });
  });
});
