import type {
  AgentObservation,
  TranscriptLineMeaning,
  TranscriptReader,
  TranscriptSummary,
} from "../agent.ts";
import { clip, clipStrings } from "../clip.ts";
import { createTurnLedger } from "../turn-ledger.ts";
import { NO_TOKENS, type TokenCounts } from "../vocabulary.ts";
import { type ConversationEntry, orderOf, parseConversationLine } from "./conversation.ts";

/** OpenCode's tools that write files, and where their input names the file. */
const WRITING_TOOLS = new Set(["write", "edit", "patch", "multiedit"]);

const add = (a: TokenCounts, b: TokenCounts): TokenCounts => ({
  input: a.input + b.input,
  output: a.output + b.output,
  cacheRead: a.cacheRead + b.cacheRead,
  cacheCreation: a.cacheCreation + b.cacheCreation,
});

/**
 * Folds the conversation file (conversation.ts) into what ag reports. Only a person's prompt is
 * evidence of the state; a fork's copied messages and a sub-agent's lines are history and
 * activity. Each line is written once by the plugin, so usage needs no de-duplication beyond a
 * line read twice (a file read again from its start). `/read` and the turn's end are the latest
 * turn's by meaning (turn-ledger.ts): each line falls in the turn of the latest prompt made
 * before it, by OpenCode's ascending message ids (conversation.ts orderOf), not by line order.
 */
export function createOpenCodeReader(): TranscriptReader {
  const roles = { user: 0, assistant: 0, system: 0 };
  const usageIds = new Set<string>();
  const toolIds = new Set<string>();
  const byModel: Record<string, TokenCounts> = {};
  const toolCallsByName: Record<string, number> = {};
  const files = new Set<string>();
  let tokens = NO_TOKENS;
  const ledger = createTurnLedger();
  let turns = 0;
  let toolErrors = 0;
  let lastAssistant: string | null = null;
  let startedAt: string | null = null;
  let lastEntryAt: string | null = null;

  function tally(entry: ConversationEntry): TranscriptLineMeaning["usage"] {
    if (entry.kind === "usage") {
      if (usageIds.has(entry.id)) return undefined;
      usageIds.add(entry.id);
      tokens = add(tokens, entry.tokens);
      if (entry.model) byModel[entry.model] = add(byModel[entry.model] ?? NO_TOKENS, entry.tokens);
      return { messageId: entry.id, model: entry.model, tokens: { ...entry.tokens } };
    }
    if (entry.kind === "session") return undefined;
    roles[entry.role]++;
    startedAt ??= entry.at;
    lastEntryAt = entry.at ?? lastEntryAt;
    if (entry.kind === "tool_use" && !toolIds.has(entry.id)) {
      toolIds.add(entry.id);
      toolCallsByName[entry.tool] = (toolCallsByName[entry.tool] ?? 0) + 1;
      const path = (entry.input as { filePath?: unknown } | null)?.filePath;
      if (WRITING_TOOLS.has(entry.tool) && typeof path === "string") files.add(path);
    }
    if (entry.kind === "tool_result" && entry.isError) toolErrors++;
    if (entry.sidechain) return undefined;
    const order = orderOf(entry);
    if (entry.kind === "prompt") {
      turns++;
      ledger.begin({ id: entry.message ?? entry.id, order, prompt: entry.text });
    } else if (entry.kind === "text" || entry.kind === "api_error") {
      ledger.text(entry.id, entry.text, { order });
      if (entry.kind === "text") lastAssistant = entry.text;
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
    summary(): TranscriptSummary {
      const span = startedAt && lastEntryAt ? Date.parse(lastEntryAt) - Date.parse(startedAt) : Number.NaN;
      return {
        messages: { ...roles },
        turns,
        toolCalls: toolIds.size,
        toolCallsByName: { ...toolCallsByName },
        toolErrors,
        filesTouched: [...files],
        lastUserMessage: ledger.prompt(),
        lastAssistantMessage: lastAssistant,
        startedAt,
        lastEntryAt,
        durationMs: Number.isFinite(span) ? span : null,
      };
    },
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
        messages: [
          {
            event: "message.tool_use",
            detail: entry.tool,
            meta: { ...meta, tool: entry.tool, toolUseId: entry.callID, input: clipStrings(entry.input) },
          },
        ],
      };
    case "tool_result":
      return {
        observation: activity,
        messages: [
          {
            event: "message.tool_result",
            detail: clip(entry.text),
            meta: { ...meta, toolUseId: entry.callID, isError: entry.isError },
          },
        ],
      };
    default:
      return { observation: activity, messages: [] };
  }
}
