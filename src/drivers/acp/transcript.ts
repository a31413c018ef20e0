import { dirname } from "node:path";
import { emptySummary, type TranscriptLineMeaning, type TranscriptReader } from "../../agents/agent.ts";
import { clip, clipStrings } from "../../agents/clip.ts";
import { createUsageTally } from "../../agents/usage.ts";
import {
  type MessageKind,
  type TranscriptFormat,
  type TranscriptMessage,
  topLevelString,
} from "../../transcript/cursor.ts";
import { type AcpEntry, ENTRY_ROLES } from "./entries.ts";
import { readState } from "./orphans.ts";

/** ag's own transcript of an ACP session (entries.ts) for the cursor index and the session's reader. */

const TYPE = new TextEncoder().encode("type");
const decoder = new TextDecoder();

const KINDS: Partial<Record<AcpEntry["type"], MessageKind>> = {
  user: "prompt",
  assistant: "text",
  thinking: "thinking",
  tool_use: "tool_use",
  tool_result: "tool_result",
  plan: "other",
  turn_end: "system",
  reopened: "system",
};

function parse(line: string): AcpEntry | null {
  try {
    const entry = JSON.parse(line) as AcpEntry;
    return entry && typeof entry.type === "string" && entry.type in ENTRY_ROLES ? entry : null;
  } catch {
    return null;
  }
}

function textOf(entry: AcpEntry): string {
  switch (entry.type) {
    case "tool_use":
      return JSON.stringify(entry.input ?? null);
    case "turn_end":
      return entry.stopReason;
    case "usage":
      return "";
    default:
      return entry.text;
  }
}

export const acpTranscriptFormat: TranscriptFormat = {
  classify(line) {
    const type = topLevelString(line, TYPE);
    return type ? (ENTRY_ROLES[decoder.decode(type) as AcpEntry["type"]] ?? null) : null;
  },
  toMessage(id, line, role): TranscriptMessage {
    const entry = parse(line);
    const base = { id, role, timestamp: entry?.at ?? null, uuid: null };
    if (!entry) return { ...base, kind: "other", text: "" };
    const message: TranscriptMessage = { ...base, kind: KINDS[entry.type] ?? "other", text: textOf(entry) };
    if (entry.type === "tool_use")
      return { ...message, toolName: entry.toolName, toolUseId: entry.toolUseId, toolInput: entry.input };
    if (entry.type === "tool_result")
      return { ...message, toolUseId: entry.toolUseId, isError: entry.isError };
    if (entry.type === "turn_end" || entry.type === "reopened") return { ...message, subtype: entry.type };
    return message;
  },
};

/** Folds the lines into what ag reports; states come from the protocol itself, not from here. */
export function createAcpTranscriptReader(): TranscriptReader {
  let latest: string[] = [];
  let ended = false;
  const usage = createUsageTally();
  const summary = emptySummary();

  function count(entry: AcpEntry): void {
    const role = ENTRY_ROLES[entry.type];
    if (role) summary.messages[role]++;
    summary.startedAt ??= entry.at;
    summary.lastEntryAt = entry.at;
    summary.durationMs = Date.parse(summary.lastEntryAt) - Date.parse(summary.startedAt);
  }

  return {
    add(line): TranscriptLineMeaning {
      const entry = parse(line);
      if (!entry) return { messages: [] };
      count(entry);
      const at = Date.parse(entry.at);
      const meta = { uuid: null, timestamp: entry.at, sidechain: false };
      switch (entry.type) {
        case "user":
          latest = [];
          ended = false;
          summary.turns++;
          summary.lastUserMessage = entry.text;
          return { at, messages: [{ event: "message.user", detail: clip(entry.text), meta }] };
        case "assistant":
          latest.push(entry.text);
          summary.lastAssistantMessage = entry.text;
          return { at, messages: [{ event: "message.assistant", detail: clip(entry.text), meta }] };
        case "thinking":
          return { at, messages: [{ event: "message.thinking", detail: clip(entry.text), meta }] };
        case "tool_use": {
          summary.toolCalls++;
          summary.toolCallsByName[entry.toolName] = (summary.toolCallsByName[entry.toolName] ?? 0) + 1;
          const input = {
            ...meta,
            tool: entry.toolName,
            toolUseId: entry.toolUseId,
            input: clipStrings(entry.input),
          };
          return { at, messages: [{ event: "message.tool_use", detail: entry.toolName, meta: input }] };
        }
        case "tool_result": {
          if (entry.isError) summary.toolErrors++;
          const result = { ...meta, toolUseId: entry.toolUseId, isError: entry.isError };
          return { at, messages: [{ event: "message.tool_result", detail: clip(entry.text), meta: result }] };
        }
        case "turn_end":
          ended = true;
          return { at, messages: [] };
        case "usage": {
          // The ledger reads a file in batches, each with a fresh reader, and counts every
          // session's usage in one map: the id must not depend on the reader nor repeat across
          // files (a turn number alone does: it starts again when ag reopens the session).
          const messageId = entry.id ?? `usage-${entry.at}-${entry.turn}`;
          usage.add(messageId, entry.model, entry.tokens);
          return { at, messages: [], usage: { messageId, model: entry.model, tokens: entry.tokens } };
        }
        default:
          return { at, messages: [] };
      }
    },
    output: () => latest.join("\n\n"),
    turnEnded: () => ended,
    tokens: () => usage.tokens(),
    tokensByModel: () => usage.tokensByModel(),
    summary: () => ({ ...summary, messages: { ...summary.messages } }),
  };
}

/** In place of an agent's own transcript: what sessions follow for a headless session. */
export const acpTranscript = {
  format: acpTranscriptFormat,
  createReader: createAcpTranscriptReader,
  find: async (): Promise<string | null> => null,
  /**
   * The agent's own id of the conversation: ACP's session id, recorded beside the transcript
   * (the agent keeps the conversation in its own store too; search's import skips it there).
   */
  conversationsIn: async (path: string): Promise<string[]> => {
    const { sessionId } = readState(dirname(path));
    return sessionId ? [sessionId] : [];
  },
};
