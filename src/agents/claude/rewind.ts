import { dirname, join } from "node:path";
import { AgError } from "../../shared/errors.ts";
import { readTranscriptLine } from "./transcript.ts";

/**
 * A copy of a Claude Code conversation as its first `turns` turns left it, as the conversation
 * `conversationId` (in the same project folder, so `claude --resume <conversationId>` finds
 * it): the lines before the person's prompt that begins turn `turns + 1`, each line's
 * `sessionId` now the copy's. A turn begins at a prompt of the main conversation (a sub-agent's
 * lines are sidechain); what the turn wrote after it (replies, tool results, bookkeeping) stays.
 * The next prompt of the resumed copy hangs below the copy's last line: the model sees only
 * those turns.
 */
export async function conversationAt(path: string, turns: number, conversationId: string): Promise<string> {
  const lines = (await Bun.file(path).text()).split("\n").filter((line) => line.trim() !== "");
  const kept: string[] = [];
  let prompts = 0;
  for (const line of lines) {
    const entry = readTranscriptLine(line)?.entry;
    if (entry?.kind === "prompt" && !entry.sidechain && ++prompts > turns) break;
    kept.push(renamed(line, conversationId));
  }
  if (prompts < turns)
    throw new AgError("CHECKPOINT_NOT_FOUND", `the conversation has ${prompts} turn(s), not ${turns}`);
  const copy = join(dirname(path), `${conversationId}.jsonl`);
  await Bun.write(copy, `${kept.join("\n")}\n`);
  return copy;
}

/** The line as the copy's: its sessionId replaced (a line that is not a JSON object as it is). */
function renamed(line: string, conversationId: string): string {
  try {
    const value = JSON.parse(line) as unknown;
    if (typeof value !== "object" || value === null || Array.isArray(value)) return line;
    const record = value as Record<string, unknown>;
    return "sessionId" in record ? JSON.stringify({ ...record, sessionId: conversationId }) : line;
  } catch {
    return line;
  }
}
