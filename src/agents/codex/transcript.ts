import {
  type MessageRole,
  type TranscriptFormat,
  type TranscriptMessage,
  topLevelString,
} from "../../transcript/cursor.ts";
import { toolUseFields } from "../messages.ts";
import { parseRolloutLine, type RolloutEntry } from "./rollout.ts";

/**
 * A rollout for the cursor index: the message entries are what the conversation holds — a
 * person's prompts and Codex's interrupt notes (user), the model's text, reasoning and tool calls
 * (assistant), tool results (user, as the model gets them) and a turn's API error (assistant).
 * Bookkeeping (settings, token counts, Codex's own context messages) is no message.
 */

const ROLES: Partial<Record<RolloutEntry["kind"], MessageRole>> = {
  prompt: "user",
  interrupt: "user",
  tool_result: "user",
  text: "assistant",
  thinking: "assistant",
  tool_use: "assistant",
};

function roleOf(entry: RolloutEntry | null): MessageRole | null {
  if (!entry) return null;
  if (entry.kind === "turn_end") return entry.how === "api_error" ? "assistant" : null;
  return ROLES[entry.kind] ?? null;
}

const TYPE_KEY = new TextEncoder().encode("type");
const decoder = new TextDecoder();
/** Only these lines can hold a message: the others (session_meta holds the whole system prompt) are not decoded. */
const CANDIDATES = new Set(["response_item", "event_msg"]);

export function toCursorMessage(id: number, line: string, role: MessageRole): TranscriptMessage {
  const entry = parseRolloutLine(line);
  const base = { id, role, timestamp: entry?.timestamp ?? null, uuid: null };
  switch (entry?.kind) {
    case "prompt":
      return { ...base, kind: "prompt", text: entry.text, ...(entry.turnId ? { uuid: entry.turnId } : {}) };
    case "interrupt":
      return { ...base, kind: "interrupt", text: entry.text };
    case "text":
    case "thinking":
      return { ...base, kind: entry.kind, text: entry.text };
    case "tool_use":
      return { ...base, ...toolUseFields(entry.name, entry.id, entry.input) };
    case "tool_result":
      return { ...base, kind: "tool_result", text: entry.text, toolUseId: entry.id, isError: entry.isError };
    case "turn_end":
      return { ...base, kind: "api_error", text: entry.error ?? "", isError: true };
    default:
      return { ...base, kind: "other", text: "" };
  }
}

export const codexTranscriptFormat: TranscriptFormat = {
  classify(line) {
    const type = topLevelString(line, TYPE_KEY);
    if (!type || !CANDIDATES.has(decoder.decode(type))) return null;
    return roleOf(parseRolloutLine(decoder.decode(line)));
  },
  toMessage: toCursorMessage,
};
