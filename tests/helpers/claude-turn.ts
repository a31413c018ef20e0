import { readFileSync } from "node:fs";
import { join } from "node:path";

/**
 * The first turn of a real Claude Code 2.1.197 session (the version the simulated agent shows),
 * split where the agent writes it: the prompt first, the reply and the turn's end later.
 */
const SAMPLE = readFileSync(join(import.meta.dir, "..", "fixtures", "transcripts", "sample.jsonl"), "utf8")
  .split("\n")
  .filter(Boolean);

export const CLAUDE_TURN = {
  prompt: "say hello",
  /** The prompt's line and what Claude Code attached to it: the turn waits for the model. */
  begun: SAMPLE.slice(0, 6),
  /** The reply, the Stop hook's record, the turn's end. */
  ended: SAMPLE.slice(6, 10),
  reply: "Hello from the mock model! 👋",
};

/** Transcript lines as the file holds them. */
export const jsonlText = (lines: string[]) => `${lines.join("\n")}\n`;
