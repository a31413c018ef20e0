import {
  type MessageKind,
  type MessageRole,
  roleNamedBy,
  type TranscriptFormat,
  type TranscriptMessage,
} from "../../transcript/cursor.ts";
import { countsOf, isObject, type Json, parseJsonLine, str } from "../json-fields.ts";
import { toolUseFields } from "../messages.ts";
import type { TokenCounts } from "../vocabulary.ts";

// ── One line → a typed entry ────────────────────────────────────────────────────────────────────

export type TokenTotals = TokenCounts;

export type AssistantBlock =
  | { type: "text"; text: string }
  | { type: "thinking"; text: string }
  | { type: "tool_use"; id: string; name: string; input: unknown }
  | { type: "other"; blockType: string };

export interface ToolResult {
  toolUseId: string;
  isError: boolean;
  text: string;
}

interface EntryBase {
  uuid: string | null;
  timestamp: string | null;
  /** Written by a sub-agent (not the main conversation). */
  sidechain: boolean;
}

/** A message entry of a Claude Code transcript (one line each); `role` is the line's `type`. */
export type TranscriptEntry = EntryBase &
  (
    | {
        kind: "prompt";
        role: "user";
        text: string;
        source: string | null;
        promptId: string | null;
        /** A shell (`!`) or slash (`/`) command, written as tags; `text` is it as typed. */
        command?: boolean;
      }
    | { kind: "user_text"; role: "user"; text: string }
    | { kind: "interrupt"; role: "user"; text: string; forToolUse: boolean }
    | { kind: "tool_result"; role: "user"; results: ToolResult[]; toolUseResult: unknown }
    | {
        kind: "assistant";
        role: "assistant";
        messageId: string | null;
        model: string | null;
        stopReason: string | null;
        usage: TokenTotals | null;
        blocks: AssistantBlock[];
      }
    | { kind: "api_error"; role: "assistant"; text: string; error: string | null; status: number | null }
    | {
        kind: "system";
        role: "system";
        subtype: string;
        durationMs: number | null;
        content: string | null;
        /** A built-in slash command the user ran (`/cost` …), as typed (its name and arguments). */
        command?: string;
      }
  );

const INTERRUPT = "[Request interrupted by user";

/**
 * A transcript line as a typed entry, or null for a line that is not a message entry: bookkeeping
 * (mode, permission-mode, file-history-snapshot, ai-title, last-prompt, attachment, progress …) or
 * anything that is not JSON. Message entries are exactly the `user`, `assistant` and `system` lines.
 */
export function parseTranscriptLine(text: string): TranscriptEntry | null {
  return readTranscriptLine(text)?.entry ?? null;
}

/**
 * Where a line sits in the conversation: its uuid and its parent's. Every line of the chain has
 * them — attachments and hook output too, not only message entries — and a reply's parent chain
 * leads to its prompt whatever order the lines were written in.
 */
export interface TranscriptLink {
  uuid: string;
  parentUuid: string | null;
  sidechain: boolean;
}

/** A line's message entry (null for bookkeeping) and its link (null for a line without a uuid). */
export function readTranscriptLine(
  text: string,
): { entry: TranscriptEntry | null; link: TranscriptLink | null } | null {
  const line = parseJsonLine(text) as Json | null | undefined;
  if (typeof line !== "object" || line === null) return null;
  const uuid = str(line.uuid);
  const link = uuid ? { uuid, parentUuid: str(line.parentUuid), sidechain: line.isSidechain === true } : null;
  return { entry: messageEntry(line), link };
}

function messageEntry(line: Json): TranscriptEntry | null {
  const base: EntryBase = {
    uuid: str(line.uuid),
    timestamp: str(line.timestamp),
    sidechain: line.isSidechain === true,
  };
  const message = (isObject(line.message) ? line.message : {}) as Json;
  if (line.type === "user") return { ...base, ...parseUser(line, message) };
  if (line.type === "assistant") return { ...base, ...parseAssistant(line, message) };
  if (line.type === "system") {
    const durationMs = typeof line.durationMs === "number" ? line.durationMs : null;
    const content = str(line.content);
    const command = content ? commandOf(content) : null;
    return {
      ...base,
      kind: "system",
      role: "system",
      subtype: str(line.subtype) ?? "",
      durationMs,
      content,
      ...(command ? { command } : {}),
    };
  }
  return null;
}

function parseUser(line: Json, message: Json) {
  const blocks = Array.isArray(message.content) ? (message.content as Json[]) : [];
  const results = blocks.filter((b) => b?.type === "tool_result");
  if (results.length > 0) {
    const parsed = results.map((b) => ({
      toolUseId: str(b.tool_use_id) ?? "",
      isError: b.is_error === true,
      text: contentText(b.content),
    }));
    return { kind: "tool_result", role: "user", results: parsed, toolUseResult: line.toolUseResult } as const;
  }
  const text = contentText(message.content);
  if (text.startsWith(INTERRUPT))
    return { kind: "interrupt", role: "user", text, forToolUse: text.includes("for tool use") } as const;
  // Claude Code's own test for a person's prompt: not meta, no tool result, human (or no) origin.
  const origin = isObject(line.origin) ? str(line.origin.kind) : null;
  const human = !line.isMeta && !line.isCompactSummary && line.toolUseResult === undefined;
  if (!human || (origin !== null && origin !== "human") || COMMAND_OUTPUT.test(text))
    return { kind: "user_text", role: "user", text } as const;
  const promptId = str(line.promptId);
  const shell = text.match(SHELL_INPUT);
  const command = shell ? `!${shell[1]}` : commandOf(text);
  if (command !== null)
    return { kind: "prompt", role: "user", text: command, source: null, promptId, command: true } as const;
  return { kind: "prompt", role: "user", text, source: str(line.promptSource), promptId } as const;
}

/** `!cmd` in the input box: written (when it has run) as `<bash-input>cmd</bash-input>`. */
const SHELL_INPUT = /^<bash-input>([\s\S]*)<\/bash-input>\s*$/;
/** What a shell or built-in command printed: not a person's words. */
const COMMAND_OUTPUT = /^<(bash-stdout|bash-stderr|local-command-stdout|local-command-caveat)>/;

/**
 * A slash command as typed, from the tags Claude Code writes for it:
 * `<command-name>/greet</command-name> … <command-args>Bob</command-args>` → "/greet Bob".
 */
function commandOf(text: string): string | null {
  const name = text.match(/<command-name>\s*(\/?[^<]*?)\s*<\/command-name>/)?.[1];
  if (!name) return null;
  const args = text.match(/<command-args>([\s\S]*?)<\/command-args>/)?.[1]?.trim();
  const command = name.startsWith("/") ? name : `/${name}`;
  return args ? `${command} ${args}` : command;
}

function parseAssistant(line: Json, message: Json) {
  const blocks = Array.isArray(message.content) ? (message.content as Json[]) : [];
  if (line.isApiErrorMessage === true) {
    const status = typeof line.apiErrorStatus === "number" ? line.apiErrorStatus : null;
    return {
      kind: "api_error",
      role: "assistant",
      text: contentText(blocks),
      error: str(line.error),
      status,
    } as const;
  }
  return {
    kind: "assistant",
    role: "assistant",
    messageId: str(message.id),
    model: str(message.model),
    stopReason: str(message.stop_reason),
    usage: readUsage(message.usage),
    blocks: blocks.map(readBlock),
  } as const;
}

function readBlock(block: Json): AssistantBlock {
  if (block?.type === "text") return { type: "text", text: str(block.text) ?? "" };
  if (block?.type === "thinking") return { type: "thinking", text: str(block.thinking) ?? "" };
  if (block?.type === "tool_use")
    return { type: "tool_use", id: str(block.id) ?? "", name: str(block.name) ?? "", input: block.input };
  return { type: "other", blockType: str(block?.type) ?? "unknown" };
}

function readUsage(usage: unknown): TokenTotals | null {
  return countsOf(usage, {
    input: "input_tokens",
    output: "output_tokens",
    cacheRead: "cache_read_input_tokens",
    cacheCreation: "cache_creation_input_tokens",
  });
}

/** A string, or the text blocks of a content array joined by newlines. */
function contentText(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content
    .filter((b) => b?.type === "text" && typeof b.text === "string")
    .map((b) => b.text as string)
    .join("\n");
}

// ── The cursor's view of a line ─────────────────────────────────────────────────────────────────

/** The cursor message of one message-entry line (one content block for assistant lines). */
export function toCursorMessage(id: number, line: string, role: MessageRole): TranscriptMessage {
  const entry = parseTranscriptLine(line);
  if (!entry) return { id, role, kind: "other", text: "", timestamp: null, uuid: null };
  const base = { id, role: entry.role, timestamp: entry.timestamp, uuid: entry.uuid };
  const message = entry.sidechain ? { ...base, sidechain: true } : base;
  switch (entry.kind) {
    case "prompt":
    case "interrupt":
      return { ...message, kind: entry.kind, text: entry.text };
    case "user_text":
      return { ...message, kind: "other", text: entry.text };
    case "tool_result": {
      const text = entry.results.map((r) => r.text).join("\n");
      const isError = entry.results.some((r) => r.isError);
      return { ...message, kind: "tool_result", text, toolUseId: entry.results[0]?.toolUseId, isError };
    }
    case "api_error":
      return { ...message, kind: "api_error", text: entry.text, isError: true };
    case "system":
      return { ...message, kind: "system", text: entry.content ?? "", subtype: entry.subtype };
    case "assistant":
      return {
        ...message,
        ...assistantFields(entry.blocks),
        messageId: entry.messageId ?? undefined,
        model: entry.model ?? undefined,
      };
  }
}

/** Claude Code writes one block per line; a line with several is shown as its first block's kind. */
function assistantFields(blocks: AssistantBlock[]) {
  const first = blocks[0];
  const text = blocks.map(blockText).join("\n");
  if (!first || first.type === "other") return { kind: "other" as MessageKind, text };
  if (first.type !== "tool_use") return { kind: first.type as MessageKind, text };
  return toolUseFields(first.name, first.id, first.input, text);
}

function blockText(block: AssistantBlock): string {
  if (block.type === "text" || block.type === "thinking") return block.text;
  if (block.type === "tool_use") return JSON.stringify(block.input ?? null);
  return "";
}

/** Claude Code's transcript for the cursor index: message entries are the user/assistant/system lines. */
export const claudeTranscriptFormat: TranscriptFormat = {
  classify: roleNamedBy("type"),
  toMessage: toCursorMessage,
};
