import { expect, test } from "bun:test";
import { join } from "node:path";
import { createClaudeTranscriptReader } from "../../src/agents/claude/reader.ts";

const sample = join(import.meta.dir, "..", "fixtures", "transcripts", "sample.jsonl");

test("the reader turns a real transcript into events, a summary and the latest output", async () => {
  const reader = createClaudeTranscriptReader();
  const events: string[] = [];
  let prompts = 0;
  for (const line of (await Bun.file(sample).text()).trim().split("\n")) {
    const meaning = reader.add(line);
    events.push(...meaning.messages.map((m) => m.event));
    if (meaning.observation?.kind === "prompt-submitted") {
      prompts++;
      expect(meaning.observation.promptId).toBeString();
    }
    if (meaning.observation || meaning.messages.length) expect(meaning.at).toBeNumber();
  }
  const summary = reader.summary();
  expect(summary.turns).toBe(prompts);
  expect(summary.toolCalls).toBe(7);
  expect(summary.filesTouched.some((f) => f.endsWith("hello.txt"))).toBe(true);
  expect(summary.lastUserMessage).toBeString();
  expect(summary.messages.user + summary.messages.assistant + summary.messages.system).toBe(61);
  expect(summary.durationMs).toBeGreaterThan(0);
  expect(new Set(events)).toEqual(
    new Set([
      "message.user",
      "message.assistant",
      "message.thinking",
      "message.tool_use",
      "message.tool_result",
    ]),
  );
  expect(reader.tokens().output).toBe(399);
});

test("a tool's input in its event is clipped (a Write holds a whole file); the summary still sees the file", () => {
  const reader = createClaudeTranscriptReader();
  const line = JSON.stringify({
    type: "assistant",
    uuid: "00000000-0000-4000-8000-000000000001",
    timestamp: "2026-01-01T00:00:00.000Z",
    message: {
      id: "msg_1",
      role: "assistant",
      model: "m",
      content: [
        {
          type: "tool_use",
          id: "t1",
          name: "Write",
          input: { file_path: "/w/big.txt", content: "x".repeat(50_000) },
        },
      ],
      usage: { input_tokens: 1, output_tokens: 1 },
    },
  });
  const [event] = reader.add(line).messages;
  if (event?.event !== "message.tool_use") throw new Error(`expected a tool use, got ${event?.event}`);
  const input = event.meta.input as { file_path: string; content: string };
  expect(input.file_path).toBe("/w/big.txt");
  expect(input.content.length).toBe(2000);
  expect(input.content.endsWith("…")).toBe(true);
  expect(reader.summary().filesTouched).toEqual(["/w/big.txt"]);
});

test("shell and slash commands confirm that typing was taken, but are no evidence of the state", async () => {
  const reader = createClaudeTranscriptReader();
  const lines = (
    await Bun.file(join(import.meta.dir, "..", "fixtures", "transcripts", "commands.jsonl")).text()
  )
    .trim()
    .split("\n");
  const observations = lines.map((line) => reader.add(line).observation);
  // A shell command is written once it has run (after its turn may have ended): it only
  // confirms the delivery; a person's prompt line still says a turn began.
  // Known by its own line's uuid: such a line may carry the previous prompt's promptId.
  expect(observations[0]).toEqual({
    kind: "input-recorded",
    text: "!echo hi there",
    promptId: JSON.parse(lines[0]!).uuid,
  });
  expect(observations[4]).toMatchObject({ kind: "input-recorded", text: "/usage" });
  expect(observations[6]).toMatchObject({ kind: "input-recorded", text: "/greet Bob" });
  expect(observations[7]).toMatchObject({ kind: "prompt-submitted", text: "a    b    c" });
  expect(observations.filter((o) => o?.kind === "prompt-submitted")).toHaveLength(1);
});
