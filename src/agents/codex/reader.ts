import { isAbsolute, join } from "node:path";
import type { TranscriptLineMeaning, TranscriptReader } from "../agent.ts";
import { emptySummary, summaryOf } from "../agent.ts";
import { clip } from "../clip.ts";
import { toolResultMessage, toolUseMessage } from "../messages.ts";
import { createTurnLedger } from "../turn-ledger.ts";
import { NO_TOKENS, type TokenCounts } from "../vocabulary.ts";
import { patchFiles } from "./hooks.ts";
import { parseRolloutLine, type RolloutEntry } from "./rollout.ts";

/**
 * A rollout's lines folded into what ag reports: prompts (state evidence, like the submit hook),
 * `/read`'s answer, tool calls, tokens (one token_usage_record per model response, counted once)
 * and whether the latest turn's end is written down. A fork's rollout holds only what follows
 * the fork (it points at its parent's file for the rest), so its totals are its own. The answer
 * and the end are the latest turn's by meaning (turn-ledger.ts): each line names its turn
 * (turn_id) and its place (ordinal), so a line written out of order still lands in its turn.
 */
export function createCodexTranscriptReader(): TranscriptReader {
  const tokens = { ...NO_TOKENS };
  const byModel: Record<string, TokenCounts> = {};
  const counted = new Set<string>();
  const files = new Set<string>();
  const facts = emptySummary();
  const ledger = createTurnLedger();
  let model: string | null = null;
  let cwd = "";
  let lines = 0;

  /** Each model response once (it has one record; a repeat would not count twice). */
  function count(responseId: string, used: TokenCounts): void {
    if (counted.has(responseId)) return;
    counted.add(responseId);
    add(tokens, used);
    if (!model) return;
    const perModel = byModel[model] ?? { ...NO_TOKENS };
    byModel[model] = perModel;
    add(perModel, used);
  }

  function fold(entry: RolloutEntry): void {
    const place = { order: entry.ordinal, turn: "turnId" in entry ? entry.turnId : null };
    const line = `line:${lines++}`;
    facts.startedAt ??= entry.timestamp;
    facts.lastEntryAt = entry.timestamp ?? facts.lastEntryAt;
    switch (entry.kind) {
      case "meta":
      case "context":
        cwd = entry.cwd ?? cwd;
        if (entry.kind === "context") model = entry.model ?? model;
        return;
      case "turn_start":
        if (entry.turnId) ledger.begin({ id: entry.turnId, order: entry.ordinal });
        return;
      case "prompt":
        facts.messages.user++;
        facts.turns++;
        ledger.begin({ id: entry.turnId ?? line, order: entry.ordinal, prompt: entry.text });
        return;
      case "interrupt":
      case "tool_result":
        facts.messages.user++;
        if (entry.kind === "tool_result" && entry.isError) facts.toolErrors++;
        return;
      case "text":
        facts.messages.assistant++;
        ledger.text(line, entry.text, place);
        facts.lastAssistantMessage = entry.text;
        return;
      case "thinking":
        facts.messages.assistant++;
        return;
      case "tool_use":
        facts.messages.assistant++;
        facts.toolCalls++;
        facts.toolCallsByName[entry.name] = (facts.toolCallsByName[entry.name] ?? 0) + 1;
        for (const file of touched(entry)) files.add(isAbsolute(file) || !cwd ? file : join(cwd, file));
        return;
      case "turn_end":
        ledger.mark(true, place);
        if (entry.how === "api_error") {
          facts.messages.assistant++;
          ledger.text(line, entry.error ?? "API error", place); // as Codex's own last message would say
        }
        return;
    }
  }

  return {
    add(line) {
      const entry = parseRolloutLine(line);
      if (!entry) return { messages: [] };
      fold(entry);
      const at = entry.timestamp ? Date.parse(entry.timestamp) : Number.NaN;
      const meaning = meaningOf(entry);
      if (entry.kind === "usage" && entry.responseId) {
        count(entry.responseId, entry.tokens);
        meaning.usage = { messageId: entry.responseId, model, tokens: { ...entry.tokens } };
      }
      return Number.isFinite(at) ? { ...meaning, at } : meaning;
    },
    output: () => ledger.output(),
    turnEnded: () => ledger.ended(),
    tokens: () => ({ ...tokens }),
    tokensByModel: () => Object.fromEntries(Object.entries(byModel).map(([m, t]) => [m, { ...t }])),
    summary: () => summaryOf({ ...facts, lastUserMessage: ledger.prompt() }, files),
  };
}

/** The files an apply_patch call writes (its freeform input is the patch). */
function touched(entry: Extract<RolloutEntry, { kind: "tool_use" }>): string[] {
  if (entry.name !== "apply_patch") return [];
  const input = entry.input as { input?: unknown } | null;
  return typeof input?.input === "string" ? patchFiles(input.input) : [];
}

/** What one entry means for the state and as `message.*` events. */
function meaningOf(entry: RolloutEntry): TranscriptLineMeaning {
  const meta = { uuid: null, timestamp: entry.timestamp, sidechain: false };
  switch (entry.kind) {
    case "prompt":
      return {
        observation: { kind: "prompt-submitted", text: entry.text, promptId: entry.turnId ?? undefined },
        messages: [{ event: "message.user", detail: clip(entry.text), meta }],
      };
    case "text":
      return {
        observation: { kind: "activity" },
        messages: [{ event: "message.assistant", detail: clip(entry.text), meta }],
      };
    case "thinking":
      return {
        observation: { kind: "activity" },
        messages: [{ event: "message.thinking", detail: clip(entry.text), meta }],
      };
    case "tool_use":
      return {
        observation: { kind: "activity" },
        messages: [toolUseMessage(meta, entry.name, entry.id, entry.input)],
      };
    case "tool_result":
      return {
        observation: { kind: "activity" },
        messages: [toolResultMessage(meta, entry.id, entry.text, entry.isError)],
      };
    default:
      return { observation: { kind: "activity" }, messages: [] };
  }
}

function add(target: TokenCounts, used: TokenCounts): void {
  target.input += used.input;
  target.output += used.output;
  target.cacheRead += used.cacheRead;
  target.cacheCreation += used.cacheCreation;
}
