import { readFile } from "node:fs/promises";
import type { AcpTurn, AcpUsage } from "../agent.ts";
import { createUsageTally } from "../usage.ts";
import { parseTranscriptLine } from "./transcript.ts";
import { findTranscript } from "./transcript-files.ts";

/**
 * The tokens of one headless turn, from Claude Code's own transcript (the ACP adapter reports
 * none). The turn is the lines from the first prompt Claude Code wrote down after ag sent it, up
 * to the next prompt; each message counted once (usage tally). Claude Code writes its transcript
 * in batches (up to ~100 ms behind its answer, measured with 2.1.197), so the file is read again
 * until it holds the turn's end (a final answer, an interrupt, an API error), or has been still a
 * while after the prompt, or the time is up: then the turn counts what is there.
 */

interface TurnReading {
  started: boolean;
  ended: boolean;
  usage: AcpUsage;
}

export function readTurn(text: string, startedAt: number): TurnReading {
  const tally = createUsageTally();
  let started = false;
  let ended = false;
  let model: string | null = null;
  for (const line of text.split("\n")) {
    const entry = line ? parseTranscriptLine(line) : null;
    if (!entry) continue;
    const prompt = entry.kind === "prompt" && !entry.sidechain;
    if (!started) {
      started = prompt && Date.parse(entry.timestamp ?? "") >= startedAt;
      continue;
    }
    if (prompt) break;
    if (entry.kind === "interrupt" || (entry.kind === "api_error" && !entry.sidechain)) ended = true;
    if (entry.kind !== "assistant" || entry.model === "<synthetic>") continue;
    if (entry.usage && entry.messageId) tally.add(entry.messageId, entry.model, entry.usage);
    if (entry.sidechain) continue;
    model ??= entry.model;
    if (entry.stopReason && entry.stopReason !== "tool_use") ended = true;
  }
  return { started, ended, usage: started ? { model, tokens: tally.tokens() } : null };
}

export async function claudeTurnUsage(
  dataDir: string,
  turn: AcpTurn,
  timing = { pollMs: 50, stillMs: 400, maxMs: 3_000 },
): Promise<AcpUsage> {
  const deadline = Date.now() + timing.maxMs;
  let seen = "";
  let changedAt = Date.now();
  for (;;) {
    const path = await findTranscript(dataDir, turn.sessionId, turn.workDir);
    const text = path ? await readFile(path, "utf8").catch(() => "") : "";
    if (text !== seen) {
      seen = text;
      changedAt = Date.now();
    }
    const reading = readTurn(text, turn.startedAt);
    const still = reading.started && Date.now() - changedAt >= timing.stillMs;
    if (reading.ended || still || Date.now() >= deadline) return reading.usage;
    await Bun.sleep(timing.pollMs);
  }
}
