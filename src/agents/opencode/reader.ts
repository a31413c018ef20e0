import type { AgentObservation, TranscriptLineMeaning, TranscriptReader } from "../agent.ts";
import { emptySummary, summaryOf } from "../agent.ts";
import { clip } from "../clip.ts";
import { toolResultMessage, toolUseMessage } from "../messages.ts";
import { createTurnLedger } from "../turn-ledger.ts";
import { addTokens, NO_TOKENS, type TokenCounts } from "../vocabulary.ts";
import { type ConversationEntry, orderOf, parseConversationLine } from "./conversation.ts";

/** OpenCode's tools that write files, and where their input names the file. */
const WRITING_TOOLS = new Set(["write", "edit", "patch", "multiedit"]);

/**
 * Folds the conversation file (conversation.ts) into what ag reports. Only a person's prompt is
 * evidence of the state; a fork's copied messages and a sub-agent's lines are history and
 * activity. Each line is written once by the plugin, so usage needs no de-duplication beyond a
 * line read twice (a file read again from its start). `/read` and the turn's end are the latest
 * turn's by meaning (turn-ledger.ts): each line falls in the turn of the latest prompt made
 * before it, by OpenCode's ascending message ids (conversation.ts orderOf), not by line order.
 */
export function createOpenCodeReader(): TranscriptReader {
  const usageIds = new Set<string>();
  const toolIds = new Set<string>();
  const byModel: Record<string, TokenCounts> = {};
  const files = new Set<string>();
  const facts = emptySummary();
  let tokens = NO_TOKENS;
  const ledger = createTurnLedger();

  function tally(entry: ConversationEntry): TranscriptLineMeaning["usage"] {
    if (entry.kind === "usage") {
      if (usageIds.has(entry.id)) return undefined;
      usageIds.add(entry.id);
      tokens = addTokens(tokens, entry.tokens);
      if (entry.model) byModel[entry.model] = addTokens(byModel[entry.model] ?? NO_TOKENS, entry.tokens);
      return { messageId: entry.id, model: entry.model, tokens: { ...entry.tokens } };
    }
    if (entry.kind === "session") return undefined;
    facts.messages[entry.role]++;
    facts.startedAt ??= entry.at;
    facts.lastEntryAt = entry.at ?? facts.lastEntryAt;
    if (entry.kind === "tool_use" && !toolIds.has(entry.id)) {
      toolIds.add(entry.id);
      facts.toolCalls++;
      facts.toolCallsByName[entry.tool] = (facts.toolCallsByName[entry.tool] ?? 0) + 1;
      const path = (entry.input as { filePath?: unknown } | null)?.filePath;
      if (WRITING_TOOLS.has(entry.tool) && typeof path === "string") files.add(path);
    }
    if (entry.kind === "tool_result" && entry.isError) facts.toolErrors++;
    if (entry.sidechain) return undefined;
    const order = orderOf(entry);
    if (entry.kind === "prompt") {
      facts.turns++;
      ledger.begin({ id: entry.message ?? entry.id, order, prompt: entry.text });
    } else if (entry.kind === "text" || entry.kind === "api_error") {
      ledger.text(entry.id, entry.text, { order });
      if (entry.kind === "text") facts.lastAssistantMessage = entry.text;
    } else if (entry.kind === "system" && entry.subtype === "turn_end") {
      ledger.mark(true, { order });
    }
    return undefined;
  }

  return {
    add(line) {
      const entry = parseConversationLine(line);
      if (!entry) return { messages: [] };
      const usage = tally(entry);
      const at = entry.at ? Date.parse(entry.at) : Number.NaN;
      return {
        ...meaning(entry),
        ...(Number.isFinite(at) ? { at } : {}),
        ...(usage ? { usage } : {}),
      };
    },
    output: () => ledger.output(),
    turnEnded: () => ledger.ended(),
    tokens: () => ({ ...tokens }),
    tokensByModel: () => Object.fromEntries(Object.entries(byModel).map(([m, t]) => [m, { ...t }])),
    summary: () => summaryOf({ ...facts, lastUserMessage: ledger.prompt() }, files),
  };
}

function meaning(entry: ConversationEntry): TranscriptLineMeaning {
  if (entry.kind === "session" || entry.kind === "usage") return { messages: [] };
  // A fork's copies were said when they were new: history, not news.
  if (entry.copied) return { observation: { kind: "activity" }, messages: [] };
  const meta = { uuid: entry.id, timestamp: entry.at, sidechain: entry.sidechain };
  const activity: AgentObservation = { kind: "activity" };
  switch (entry.kind) {
    case "prompt":
      return {
        observation: entry.sidechain
          ? activity
          : {
              kind: "prompt-submitted",
              text: entry.text,
              ...(entry.message ? { promptId: entry.message } : {}),
            },
        messages: [{ event: "message.user", detail: clip(entry.text), meta }],
      };
    case "text":
      return {
        observation: activity,
        messages: [{ event: "message.assistant", detail: clip(entry.text), meta }],
      };
    case "thinking":
      return {
        observation: activity,
        messages: [{ event: "message.thinking", detail: clip(entry.text), meta }],
      };
    case "tool_use":
      return {
        observation: activity,
        messages: [toolUseMessage(meta, entry.tool, entry.callID, entry.input)],
      };
    case "tool_result":
      return {
        observation: activity,
        messages: [toolResultMessage(meta, entry.callID, entry.text, entry.isError)],
      };
    default:
      return { observation: activity, messages: [] };
  }
}
