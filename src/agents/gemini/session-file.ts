import type { MessageRole } from "../../transcript/cursor.ts";
import { countsOf, isObject, type Json, parseJsonLine, str } from "../json-fields.ts";

/**
 * The Gemini CLI's session file (0.61.0: ~/.gemini/tmp/<project>/chats/session-<time>-<id8>.jsonl),
 * as its own reader (loadConversationRecord) folds it: a header line; message records
 * `{id, timestamp, type, content, …}` that UPSERT by id (a message is written again when its
 * tool calls finish, or its tokens arrive); `{"$set": {…}}` metadata, where `$set.messages`
 * replaces the whole list (after a cancel, a resume, a compression); `{"$rewindTo": id}`.
 *
 * ag reads it as what happened, in order, each message once: a message written again is the
 * same message (its newest line counts), and the copies the CLI writes of its own history are no
 * new messages. Those copies come in one burst: after a cancelled tool call the CLI sets its
 * history anew, writing each turn as a new record (new ids, content as parts) starting with the
 * start-of-chat context turn, then the `$set.messages` that lists them. That context turn is
 * never written as a record of its own otherwise (it lives in the first `$set.messages`).
 */

export interface ToolCallRecord {
  id: string;
  name: string;
  args: Record<string, unknown>;
  /** success, error, cancelled. */
  status: string;
}

export interface GeminiTokens {
  input: number;
  output: number;
  cached: number;
  thoughts: number;
  tool: number;
}

export interface GeminiMessage {
  id: string;
  timestamp: string | null;
  /** user, gemini, info, error, warning. */
  type: string;
  /** user: parts; gemini: the reply's text as it streamed, or parts in a copy; info/error: text. */
  content: unknown;
  toolCalls: ToolCallRecord[];
  thoughts: string[];
  tokens: GeminiTokens | null;
  model: string | null;
}

export type SessionLine =
  | { kind: "message"; message: GeminiMessage }
  /** `$set.messages`: the CLI's list of messages set anew. */
  | { kind: "reset" }
  | { kind: "other" };

export function parseSessionLine(text: string): SessionLine {
  const record = parseJsonLine(text);
  if (!isObject(record)) return { kind: "other" };
  if (isObject(record.$set))
    return Array.isArray(record.$set.messages) ? { kind: "reset" } : { kind: "other" };
  if (typeof record.id !== "string" || typeof record.type !== "string") return { kind: "other" };
  return {
    kind: "message",
    message: {
      id: record.id,
      timestamp: str(record.timestamp),
      type: record.type,
      content: record.content,
      toolCalls: (Array.isArray(record.toolCalls) ? record.toolCalls : []).filter(isObject).map(toolCallOf),
      thoughts: (Array.isArray(record.thoughts) ? record.thoughts : [])
        .filter(isObject)
        .map((t) => [str(t.subject), str(t.description)].filter(Boolean).join(": ")),
      tokens: tokensOf(record.tokens),
      model: str(record.model),
    },
  };
}

function toolCallOf(call: Json): ToolCallRecord {
  return {
    id: str(call.id) ?? "",
    name: str(call.name) ?? "",
    args: isObject(call.args) ? call.args : {},
    status: str(call.status) ?? "",
  };
}

function tokensOf(tokens: unknown): GeminiTokens | null {
  return countsOf(tokens, ["input", "output", "cached", "thoughts", "tool"]);
}

// ── Which lines are the conversation's messages ──────────────────────────────────────────────────

/** What decides whether a line is one of the conversation's messages, read from bytes or JSON. */
export interface LineFacts {
  /** A `$set.messages` line: a burst of history copies ends here. */
  reset: boolean;
  id: string | null;
  type: string | null;
  /** A record holding the start-of-chat context turn: a burst of history copies begins. */
  contextCopy: boolean;
  /** gemini: content as parts, not the streamed text: written by the CLI, not the model. */
  parts: boolean;
  toolCalls: boolean;
  /** gemini: no text, thoughts or tool calls yet (its tool calls come when they have run). */
  empty: boolean;
}

/** One of the conversation's messages: its role, and the key of what it writes. */
export interface MessageEntry {
  role: MessageRole;
  /** The message id; `<id>:tools` for its tool calls, written once they have run. */
  key: string;
}

/** `<session_context>`: how the CLI's start-of-chat context turn begins. */
export const CONTEXT_TAG = "<session_context>";

/**
 * Reads one session file's lines in order and says which are the conversation's messages. A
 * gemini record's text and its tool calls are two entries: the text is written first (before the
 * tools run, or is empty), the calls when they have run, possibly more than once.
 */
export function createMessageFilter(): (facts: LineFacts) => MessageEntry | null {
  let copying = false;
  return (facts) => {
    if (facts.reset) copying = false;
    if (facts.id === null || facts.type === null) return null;
    if (facts.contextCopy) copying = true;
    if (copying) return null;
    if (facts.type === "gemini") {
      if (facts.parts) return null;
      if (facts.toolCalls) return { role: "assistant", key: `${facts.id}:tools` };
      return facts.empty ? null : { role: "assistant", key: facts.id };
    }
    return { role: roleOf(facts.type), key: facts.id };
  };
}

export function roleOf(type: string): MessageRole {
  if (type === "user") return "user";
  return type === "gemini" || type === "error" ? "assistant" : "system";
}

export function factsOf(line: SessionLine): LineFacts {
  const none = { id: null, type: null, contextCopy: false, parts: false, toolCalls: false, empty: false };
  if (line.kind !== "message") return { reset: line.kind === "reset", ...none };
  const { message } = line;
  const first = Array.isArray(message.content) ? (message.content[0] as Json | undefined) : undefined;
  return {
    reset: false,
    id: message.id,
    type: message.type,
    contextCopy: message.type === "user" && (str(first?.text) ?? "").startsWith(CONTEXT_TAG),
    parts: typeof message.content !== "string",
    toolCalls: message.toolCalls.length > 0,
    empty: message.content === "" && message.thoughts.length === 0 && message.toolCalls.length === 0,
  };
}
