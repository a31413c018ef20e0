import { describe, expect, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { transcriptPath } from "../../src/agents/claude/transcript-files.ts";
import { claudeTurnUsage, readTurn } from "../../src/agents/claude/turn-usage.ts";
import { tempDir } from "../helpers/temp.ts";

/**
 * A headless Claude Code turn's tokens, read from Claude Code's own transcript (claude-code-acp
 * reports none). The lines have the shape Claude Code 2.1.197 writes under the ACP adapter
 * (captured from a run against the mock model, trimmed to the fields read).
 */
const usage = (input: number, output: number) => ({
  input_tokens: input,
  cache_creation_input_tokens: 0,
  cache_read_input_tokens: 18946,
  output_tokens: output,
});
const prompt = (at: string, text: string) =>
  JSON.stringify({
    type: "user",
    timestamp: at,
    isSidechain: false,
    promptSource: "sdk",
    message: { role: "user", content: [{ type: "text", text }] },
  });
const reply = (at: string, id: string, stop: string, tokens: ReturnType<typeof usage>, text = "…") =>
  JSON.stringify({
    type: "assistant",
    timestamp: at,
    isSidechain: false,
    message: {
      id,
      model: "claude-opus-4-8",
      role: "assistant",
      stop_reason: stop,
      usage: tokens,
      content: [{ type: "text", text }],
    },
  });
const toolResult = (at: string) =>
  JSON.stringify({
    type: "user",
    timestamp: at,
    isSidechain: false,
    toolUseResult: {},
    message: { role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_1", content: "ok" }] },
  });

const SAY_HELLO = [
  prompt("2026-11-24T21:55:20.857Z", "say hello"),
  reply("2026-11-24T21:55:20.941Z", "msg_hello", "end_turn", usage(1652, 8)),
];
// The tool round's message is written twice (its text, then its tool_use block).
const EDIT_FILE = [
  prompt("2026-11-24T21:55:20.978Z", "edit file"),
  reply("2026-11-24T21:55:21.022Z", "msg_tool", "tool_use", usage(1689, 25)),
  reply("2026-11-24T21:55:21.135Z", "msg_tool", "tool_use", usage(1689, 25)),
  toolResult("2026-11-24T21:55:21.219Z"),
  reply("2026-11-24T21:55:21.285Z", "msg_done", "end_turn", usage(1809, 4)),
];
const NEXT = [prompt("2026-11-24T21:55:21.425Z", "think")];
const EDIT_AT = "2026-11-24T21:55:20.978Z";
const sentAt = (iso: string) => Date.parse(iso) - 30;

describe("the tokens of a headless Claude Code turn", () => {
  test("the lines from the first prompt written after ag sent it to the next prompt, each message once", () => {
    const text = [...SAY_HELLO, ...EDIT_FILE, ...NEXT].join("\n");
    const turn = readTurn(text, sentAt(EDIT_AT));
    expect(turn).toEqual({
      started: true,
      ended: true,
      usage: {
        model: "claude-opus-4-8",
        tokens: { input: 1689 + 1809, output: 25 + 4, cacheRead: 2 * 18946, cacheCreation: 0 },
      },
    });
  });

  test("a turn whose last lines are not written yet has not ended; one whose prompt is not, has not started", () => {
    const partial = readTurn([...SAY_HELLO, ...EDIT_FILE.slice(0, 4)].join("\n"), sentAt(EDIT_AT));
    expect(partial.started).toBe(true);
    expect(partial.ended).toBe(false);
    expect(partial.usage?.tokens.output).toBe(25);
    const unwritten = readTurn(SAY_HELLO.join("\n"), sentAt(EDIT_AT));
    expect(unwritten).toEqual({ started: false, ended: false, usage: null });
  });

  test("read from the file: at once when the turn's end is written, else once the file is still", async () => {
    const dataDir = tempDir("ag-claude-usage-");
    const workDir = join(dataDir, "project");
    const file = transcriptPath(dataDir, workDir, "s-1");
    mkdirSync(join(file, ".."), { recursive: true });
    const turn = { sessionId: "s-1", workDir, startedAt: sentAt(EDIT_AT) };
    const timing = { pollMs: 10, stillMs: 500, maxMs: 5_000 };

    writeFileSync(file, `${[...SAY_HELLO, ...EDIT_FILE].join("\n")}\n`);
    let started = Date.now();
    expect((await claudeTurnUsage(dataDir, turn, timing))?.tokens.output).toBe(29);
    expect(Date.now() - started).toBeLessThan(500);

    writeFileSync(file, `${[...SAY_HELLO, ...EDIT_FILE.slice(0, 4)].join("\n")}\n`);
    started = Date.now();
    expect((await claudeTurnUsage(dataDir, turn, timing))?.tokens.output).toBe(25);
    expect(Date.now() - started).toBeGreaterThanOrEqual(500);
    expect(Date.now() - started).toBeLessThan(4_000);
  });
});
