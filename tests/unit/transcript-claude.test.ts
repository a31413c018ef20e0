import { describe, expect, test } from "bun:test";
import { mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Value } from "@sinclair/typebox/value";
import { createClaudeTranscriptReader } from "../../src/agents/claude/reader.ts";
import {
  claudeTranscriptFormat,
  parseTranscriptLine,
  toCursorMessage,
} from "../../src/agents/claude/transcript.ts";
import {
  encodeProjectDir,
  findTranscript,
  transcriptPath,
} from "../../src/agents/claude/transcript-files.ts";
import { createTranscriptState } from "../../src/agents/claude/transcript-state.ts";
import { AgError } from "../../src/shared/errors.ts";
import { TranscriptMessage } from "../../src/transcript/cursor.ts";
import { tempDir } from "../helpers/temp.ts";

const FIXTURES = join(import.meta.dir, "../fixtures/transcripts");
const linesOf = (name: string) => readFileSync(join(FIXTURES, name), "utf8").trimEnd().split("\n");
const SAMPLE = linesOf("sample.jsonl");
/** Line n (1-based, as `grep -n` shows it) of the sample, parsed. */
const sampleEntry = (n: number) => parseTranscriptLine(SAMPLE[n - 1]!);

function stateOf(lines: string[]) {
  const state = createTranscriptState();
  for (const line of lines) {
    const entry = parseTranscriptLine(line);
    if (entry) state.add(entry);
  }
  return state.snapshot();
}

describe("parsing Claude Code transcript lines", () => {
  test("bookkeeping lines are not message entries", () => {
    // mode, permission-mode, file-history-snapshot, attachment ×2, ai-title, last-prompt
    for (const n of [1, 2, 3, 5, 6, 11, 50]) expect(sampleEntry(n)).toBeNull();
    expect(parseTranscriptLine("not json")).toBeNull();
  });

  test("a typed human prompt", () => {
    expect(sampleEntry(4)).toMatchObject({
      kind: "prompt",
      role: "user",
      text: "say hello",
      source: "typed",
      uuid: "73995b10-43af-49e9-9ea1-e238fd7bb549",
      timestamp: "2026-11-22T06:51:35.555Z",
      sidechain: false,
    });
  });

  test("assistant blocks: text, thinking, tool_use — one line each, same message id", () => {
    const usage = { input: 1839, output: 25, cacheRead: 20242, cacheCreation: 0 };
    expect(sampleEntry(14)).toMatchObject({
      kind: "assistant",
      messageId: "msg_01WNO6LLhCcuGRxaQPn8aQwIfk",
      model: "claude-opus-4-8",
      usage,
      blocks: [
        { type: "thinking", text: "The user wants me to think. Let me consider it carefully… 2 + 2 = 4." },
      ],
    });
    expect(sampleEntry(15)).toMatchObject({
      messageId: "msg_01WNO6LLhCcuGRxaQPn8aQwIfk",
      usage,
      blocks: [{ type: "text", text: "After thinking: the answer is 4." }],
    });
    expect(sampleEntry(27)).toMatchObject({
      stopReason: "tool_use",
      blocks: [
        {
          type: "tool_use",
          id: "toolu_01ssi5eBtgUAB1ytdPxkEtI6Xu",
          name: "Bash",
          input: { command: "touch created-by-bash.txt", description: "Run the requested command" },
        },
      ],
    });
  });

  test("tool results, with is_error and toolUseResult", () => {
    expect(sampleEntry(29)).toMatchObject({
      kind: "tool_result",
      results: [
        {
          toolUseId: "toolu_01ssi5eBtgUAB1ytdPxkEtI6Xu",
          isError: false,
          text: "(Bash completed with no output)",
        },
      ],
      toolUseResult: { stdout: "", stderr: "", interrupted: false },
    });
    expect(sampleEntry(58)).toMatchObject({
      kind: "tool_result",
      results: [{ toolUseId: "toolu_01RcflFd6ylPMY2Op2u3UoAWGa", isError: true }],
      toolUseResult: "User rejected tool use",
    });
  });

  test("interrupt markers", () => {
    expect(sampleEntry(22)).toMatchObject({
      kind: "interrupt",
      forToolUse: false,
      text: "[Request interrupted by user]",
    });
    expect(sampleEntry(59)).toMatchObject({ kind: "interrupt", forToolUse: true });
  });

  test("API error lines", () => {
    expect(sampleEntry(107)).toMatchObject({
      kind: "api_error",
      role: "assistant",
      error: "rate_limit",
      status: 429,
    });
    expect(sampleEntry(111)).toMatchObject({ kind: "api_error", error: "server_error", status: 529 });
    // A synthetic message that is NOT an error (text shown before an interrupt) stays assistant text.
    expect(sampleEntry(21)).toMatchObject({ kind: "assistant", model: "<synthetic>" });
    const retry = parseTranscriptLine(linesOf("api-errors.jsonl")[1]!);
    expect(retry).toMatchObject({ kind: "system", subtype: "api_error" });
  });

  test("system lines", () => {
    expect(sampleEntry(10)).toMatchObject({
      kind: "system",
      role: "system",
      subtype: "turn_duration",
      durationMs: 137,
    });
    expect(sampleEntry(9)).toMatchObject({ kind: "system", subtype: "stop_hook_summary", durationMs: null });
  });

  test("meta user lines are not prompts", () => {
    const meta = linesOf("streaming.jsonl")
      .map(parseTranscriptLine)
      .find((e) => e?.kind === "user_text");
    expect(meta).toMatchObject({ text: "<local-command-stdout>compacted</local-command-stdout>" });
  });

  test("shell and slash commands: the command as typed, told apart from a person's prompt", () => {
    const [input, output, failed, failedOutput, builtin, builtinOutput, custom, tabs, caveat] =
      linesOf("commands.jsonl").map(parseTranscriptLine);
    expect(input).toMatchObject({ kind: "prompt", text: "!echo hi there", command: true });
    expect(output).toMatchObject({ kind: "user_text" });
    expect(failed).toMatchObject({ kind: "prompt", text: "!sleep 2; echo out; echo err >&2; exit 3" });
    expect(failedOutput).toMatchObject({ kind: "user_text" });
    expect(builtin).toMatchObject({ kind: "system", subtype: "local_command", command: "/usage" });
    expect(builtinOutput).toMatchObject({ kind: "system", subtype: "local_command" });
    expect(builtinOutput).not.toHaveProperty("command");
    expect(custom).toMatchObject({ kind: "prompt", text: "/greet Bob", command: true });
    expect(tabs).toMatchObject({ kind: "prompt", text: "a    b    c" });
    expect(tabs).not.toHaveProperty("command");
    expect(caveat).toMatchObject({ kind: "user_text" });
  });

  test("the byte classifier and the parser agree on every line", () => {
    const encoder = new TextEncoder();
    for (const name of [
      "sample.jsonl",
      "streaming.jsonl",
      "api-errors.jsonl",
      "interrupts.jsonl",
      "multibyte.jsonl",
    ])
      for (const line of linesOf(name))
        expect(claudeTranscriptFormat.classify(encoder.encode(line))).toBe(
          parseTranscriptLine(line)?.role ?? null,
        );
  });
});

describe("transcript state", () => {
  test("the sample: tokens counted once per message id", () => {
    const state = stateOf(SAMPLE);
    // 15 distinct message ids; summing every line instead would give input 53247, output 493.
    expect(state.tokens).toEqual({ input: 45236, output: 399, cacheRead: 303630, cacheCreation: 0 });
    expect(state.tokensByModel).toEqual({ "claude-opus-4-8": state.tokens });
    expect(state.entries).toBe(61);
  });

  test("the sample: tools, last prompt, the failed last turn", () => {
    const state = stateOf(SAMPLE);
    expect(state.toolCalls).toBe(7);
    expect(state.toolCallsByName).toEqual({
      Bash: 1,
      Write: 2,
      Read: 1,
      Edit: 1,
      AskUserQuestion: 1,
      ExitPlanMode: 1,
    });
    expect(state.toolErrors).toBe(1);
    expect(state.lastPrompt).toEqual({ text: "overloaded", timestamp: "2026-11-22T06:51:54.383Z" });
    expect(state.turn).toMatchObject({ ended: true, endReason: "api_error", durationMs: 1791 });
    expect(state.turn.output).toStartWith("API Error: 529 Overloaded (mock).");
    expect(state.lastApiError).toMatchObject({ error: "server_error", status: 529 });
  });

  test("/read output: every assistant text of the turn, joined by newlines", () => {
    const throughEdit = stateOf(SAMPLE.slice(0, 46)); // the "edit file" turn
    expect(throughEdit.turn).toEqual({
      output: "I'll create the file.\nWrote hello.txt.",
      ended: true,
      endReason: "completed",
      durationMs: 302,
    });
    const midTurn = stateOf(SAMPLE.slice(0, 38)); // its tool is still running
    expect(midTurn.turn).toMatchObject({ output: "I'll create the file.", ended: false, endReason: null });
    const thinking = stateOf(SAMPLE.slice(0, 18));
    expect(thinking.turn.output).toBe("After thinking: the answer is 4."); // thinking is not output
  });

  test("streaming: a growing output count, parallel tools, a sub-agent", () => {
    const state = stateOf(linesOf("streaming.jsonl"));
    expect(state.tokens).toEqual({ input: 2250, output: 137, cacheRead: 41000, cacheCreation: 300 });
    expect(state.tokensByModel).toEqual({
      "claude-opus-4-8": { input: 2200, output: 130, cacheRead: 41000, cacheCreation: 300 },
      "claude-haiku-4-5": { input: 50, output: 7, cacheRead: 0, cacheCreation: 0 },
    });
    expect(state.turn.output).toBe("Reading both files.\nDone: a.ts is fine, b.ts is missing.");
    expect(state.toolCallsByName).toEqual({ Read: 2 });
    expect(state.toolErrors).toBe(1);
    expect(state.entries).toBe(11);
  });

  test("interrupts end the turn", () => {
    const lines = linesOf("interrupts.jsonl");
    expect(stateOf(lines.slice(0, 3)).turn).toMatchObject({
      output: "This reply is streamed slowly, word ",
      ended: true,
      endReason: "interrupted",
    });
    const state = stateOf(lines);
    expect(state.turn).toMatchObject({ output: "", ended: true, endReason: "interrupted" });
    expect(state.lastPrompt?.text).toBe("change file");
    expect(state.toolErrors).toBe(1);
  });

  test("API errors: the latest one is kept, and is the turn's output", () => {
    const state = stateOf(linesOf("api-errors.jsonl"));
    expect(state.lastApiError).toMatchObject({ error: "server_error", status: 529 });
    expect(state.turn).toMatchObject({ ended: true, endReason: "api_error", durationMs: 1791 });
    expect(state.tokens).toEqual({ input: 0, output: 0, cacheRead: 0, cacheCreation: 0 });
  });

  test("multi-byte text survives", () => {
    const state = stateOf(linesOf("multibyte.jsonl"));
    expect(state.lastPrompt?.text).toBe("héllo wörld — 你好 👋🏽 ñ");
    expect(state.turn.output).toBe("Ответ: 日本語テキスト 🎉 e\u0301 👩‍👩‍👧 ✓");
  });
});

describe("cursor messages", () => {
  test("every sample entry maps to a valid message", () => {
    const entryLines = SAMPLE.filter((line) => parseTranscriptLine(line));
    const all = entryLines.map((line, i) => toCursorMessage(i + 1, line, parseTranscriptLine(line)!.role));
    expect(all).toHaveLength(61);
    for (const message of all) expect(Value.Check(TranscriptMessage, message)).toBe(true);
    const kinds = new Set<string>(all.map((m) => m.kind));
    expect([...kinds].sort()).toEqual(
      ["api_error", "interrupt", "prompt", "system", "text", "thinking", "tool_result", "tool_use"].sort(),
    );
  });

  test("a tool_use carries its tool; a system entry its subtype", () => {
    const bash = toCursorMessage(9, SAMPLE[26]!, "assistant");
    expect(bash).toMatchObject({
      id: 9,
      kind: "tool_use",
      toolName: "Bash",
      toolUseId: "toolu_01ssi5eBtgUAB1ytdPxkEtI6Xu",
      messageId: "msg_01PFV4Hjwa3YTu0SZpCgZraN4I",
      toolInput: { command: "touch created-by-bash.txt", description: "Run the requested command" },
    });
    expect(JSON.parse(bash.text)).toEqual(bash.toolInput);
    expect(toCursorMessage(3, SAMPLE[9]!, "system")).toMatchObject({
      kind: "system",
      subtype: "turn_duration",
    });
    expect(toCursorMessage(2, "{broken", "user")).toMatchObject({
      id: 2,
      role: "user",
      kind: "other",
      text: "",
    });
  });
});

describe("where the transcript is", () => {
  test("the folder name: every non-alphanumeric UTF-16 unit becomes '-'", () => {
    expect(encodeProjectDir("/x/my_repo.v2/sub")).toBe("-x-my-repo-v2-sub");
    expect(encodeProjectDir("/srv/agent-harness-J7aKZA/work")).toBe("-srv-agent-harness-J7aKZA-work");
    expect(encodeProjectDir("/tmp/é/😀")).toBe("-tmp-----"); // the emoji is two UTF-16 units
  });

  test("past 200 characters: the first 200, '-', a base-36 hash of the full path", () => {
    const long = `/home/dev/${Array.from({ length: 12 }, (_, i) => `very-long-folder-name-${String(i).padStart(2, "0")}`).join("/")}`;
    const encoded = encodeProjectDir(long);
    // Expected value computed independently (Java String.hashCode over UTF-16 units, |int32|, base 36).
    expect(encoded).toBe(
      "-home-dev-very-long-folder-name-00-very-long-folder-name-01-very-long-folder-name-02-very-long-folder-name-03-" +
        "very-long-folder-name-04-very-long-folder-name-05-very-long-folder-name-06-very-long-folde-eeehqe",
    );
    expect(encodeProjectDir("/a".repeat(100))).toHaveLength(200); // exactly 200: no hash
  });

  test("transcriptPath", () => {
    expect(transcriptPath("/h/.claude", "/srv/work", "0b5e55ed-0000-4000-8000-000000000001")).toBe(
      "/h/.claude/projects/-srv-work/0b5e55ed-0000-4000-8000-000000000001.jsonl",
    );
    expect(() => transcriptPath("/h/.claude", "/srv/work", "../../etc/passwd")).toThrow(AgError);
  });

  test("found at the computed path, through a symlinked workDir, or by scanning", async () => {
    const root = tempDir();
    const dataDir = join(root, "claude");
    const work = join(root, "work");
    mkdirSync(work);
    const id = "0b5e55ed-0000-4000-8000-000000000001";
    expect(await findTranscript(dataDir, id, work)).toBeNull(); // no projects folder yet

    const computed = transcriptPath(dataDir, work, id);
    mkdirSync(join(computed, ".."), { recursive: true });
    writeFileSync(computed, "");
    expect(await findTranscript(dataDir, id, work)).toBe(computed);
    symlinkSync(work, join(root, "link"));
    expect(await findTranscript(dataDir, id, join(root, "link"))).toBe(computed);

    const other = "0b5e55ed-0000-4000-8000-000000000002";
    const elsewhere = join(dataDir, "projects", "-some-other-encoding-x1y2", `${other}.jsonl`);
    mkdirSync(join(elsewhere, ".."), { recursive: true });
    writeFileSync(elsewhere, "");
    expect(await findTranscript(dataDir, other, work)).toBe(elsewhere);
    expect(await findTranscript(dataDir, other)).toBe(elsewhere);
    expect(await findTranscript(dataDir, "0b5e55ed-0000-4000-8000-000000000003", work)).toBeNull();
  });
});

describe("a turn read by its links, not by line order", () => {
  // Claude Code 2.1.328's record of a session (tests/fixtures/agents/claude/2.1.328).
  const RECORDED = readFileSync(
    join(import.meta.dir, "../fixtures/agents/claude/2.1.328/transcript.jsonl"),
    "utf8",
  )
    .trimEnd()
    .split("\n");
  const fields = (line: string) =>
    JSON.parse(line) as { type: string; uuid?: string; message?: { content?: unknown } };
  const indexOf = (test: (line: ReturnType<typeof fields>) => boolean) =>
    RECORDED.findIndex((l) => test(fields(l)));
  const prompt = (text: string) => indexOf((l) => l.type === "user" && l.message?.content === text);
  /** The second turn: "think about it", answered by a thinking line and a text line. */
  const second = prompt("think about it");
  const third = prompt("run ls");
  const replies = [second + 2, second + 3]; // after the prompt and an api-request line
  const read = (lines: string[]) => {
    const reader = createClaudeTranscriptReader();
    for (const line of lines) reader.add(line);
    return { output: reader.output(), ended: reader.turnEnded() };
  };

  test("the recording in its order: the reply of each turn", () => {
    for (const i of replies) expect(fields(RECORDED[i]!).type).toBe("assistant");
    const inOrder = read(RECORDED.slice(0, third));
    expect(inOrder.output).toStartWith("After thinking");
    expect(inOrder.ended).toBe(true);
  });

  test("a reply written above its prompt's line is that prompt's reply (it read empty)", () => {
    const moved = [
      ...RECORDED.slice(0, second),
      ...replies.map((i) => RECORDED[i]!),
      ...RECORDED.slice(second, third).filter((_, k) => !replies.includes(second + k)),
    ];
    expect(moved).toHaveLength(third);
    expect(read(moved)).toEqual(read(RECORDED.slice(0, third)));
  });

  test("a line of the turn before, read after the next prompt, is not this turn's", () => {
    const first = indexOf((l) => l.type === "assistant");
    const late = [...RECORDED.slice(0, first), ...RECORDED.slice(first + 1, second + 1), RECORDED[first]!];
    const reader = createClaudeTranscriptReader();
    for (const line of late) reader.add(line);
    expect(reader.output()).toBe("");
    expect(reader.summary().lastUserMessage).toBe("think about it");
  });
});
