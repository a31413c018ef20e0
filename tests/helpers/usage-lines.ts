import { appendFileSync } from "node:fs";

export interface UsageLine {
  /** The agent's message id: its lines (and a fork's copies of them) share it. */
  id: string;
  model?: string;
  input?: number;
  output?: number;
  cacheRead?: number;
  cacheCreation?: number;
  text?: string;
}

let uuid = 0;

/** One assistant line as Claude Code writes it (fields as in tests/fixtures/transcripts). */
export function assistantLine(line: UsageLine): string {
  uuid++;
  return JSON.stringify({
    parentUuid: null,
    isSidechain: false,
    type: "assistant",
    uuid: `00000000-0000-4000-8000-${String(uuid).padStart(12, "0")}`,
    // Long before any test's session starts: the lines are history, not evidence of its state.
    timestamp: "2025-01-01T00:00:00.000Z",
    message: {
      id: line.id,
      type: "message",
      role: "assistant",
      model: line.model ?? "claude-sonnet-test",
      content: [{ type: "text", text: line.text ?? `reply ${line.id}` }],
      stop_reason: "end_turn",
      usage: {
        input_tokens: line.input ?? 0,
        output_tokens: line.output ?? 0,
        cache_read_input_tokens: line.cacheRead ?? 0,
        cache_creation_input_tokens: line.cacheCreation ?? 0,
      },
    },
  });
}

/** Appends the lines to a transcript file, as the agent does (one JSON object per line). */
export function appendUsage(path: string, lines: UsageLine[]): void {
  appendFileSync(path, lines.map((l) => `${assistantLine(l)}\n`).join(""));
}
