import { type Static, Type } from "@sinclair/typebox";
import { AgError } from "../shared/errors.ts";
import { literalUnion } from "../shared/schema.ts";

export const MESSAGE_ROLES = ["user", "assistant", "system"] as const;
export const MessageRole = literalUnion(MESSAGE_ROLES);
export type MessageRole = Static<typeof MessageRole>;

export const MESSAGE_KINDS = [
  "prompt",
  "text",
  "thinking",
  "tool_use",
  "tool_result",
  "interrupt",
  "api_error",
  "system",
  "other",
] as const;
export const MessageKind = literalUnion(MESSAGE_KINDS, {
  description:
    "prompt: a person's prompt · text/thinking/tool_use: one assistant content block · tool_result · " +
    "interrupt: the user stopped the turn · api_error: the turn failed on an API error · system: a " +
    "bookkeeping event (subtype) · other: user text that is neither (meta, command output, summaries)",
});
export type MessageKind = Static<typeof MessageKind>;

/** One message entry of a transcript, as the cursor pages it (one transcript line each). */
export const TranscriptMessage = Type.Object({
  id: Type.Integer({ minimum: 1, description: "ordinal among the transcript's message entries, from 1" }),
  role: MessageRole,
  kind: MessageKind,
  text: Type.String({ description: "the entry's text; a tool_use's input as JSON; '' when none" }),
  timestamp: Type.Union([Type.String(), Type.Null()]),
  uuid: Type.Union([Type.String(), Type.Null()], { description: "the agent's id for this line" }),
  messageId: Type.Optional(Type.String({ description: "the agent's message id, shared by its blocks" })),
  model: Type.Optional(Type.String()),
  toolName: Type.Optional(Type.String()),
  toolUseId: Type.Optional(Type.String()),
  toolInput: Type.Optional(Type.Unknown()),
  isError: Type.Optional(Type.Boolean()),
  subtype: Type.Optional(Type.String({ description: "system entries: what happened (turn_duration …)" })),
  sidechain: Type.Optional(Type.Boolean({ description: "written by a sub-agent" })),
});
export type TranscriptMessage = Static<typeof TranscriptMessage>;

export const TranscriptCursorQuery = Type.Object({
  before_id: Type.Optional(Type.Integer({ minimum: 1, description: "only entries with a smaller id" })),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 200, default: 50 })),
  role: Type.Optional(MessageRole),
});

export const TranscriptCursorPage = Type.Object(
  {
    messages: Type.Array(TranscriptMessage, { description: "oldest first" }),
    has_more: Type.Boolean({ description: "older entries (of the requested role) exist" }),
    oldest_id: Type.Integer({ description: "id of the first message; 0 when the page is empty" }),
    newest_id: Type.Integer({ description: "id of the last message; 0 when the page is empty" }),
  },
  { description: "Pass oldest_id as before_id to page backwards without gaps or overlaps." },
);
export type TranscriptCursorPage = Static<typeof TranscriptCursorPage>;

export interface CursorQuery {
  beforeId?: number;
  limit: number;
  role?: MessageRole;
}

/** What the index makes of one line: a message entry, and the key of the entry it writes. */
export interface LineEntry {
  role: MessageRole;
  /** A key seen before: the line rewrites that entry. Without one, each line is a new entry. */
  key?: string;
}

/** Reads one file's lines, each once and in file order from the first: it may keep state. */
export type LineReader = (line: Uint8Array) => LineEntry | null;

/** What the index needs to know about one agent's transcript format. */
export interface TranscriptFormat {
  /** The role of a message entry, or null for any other line. Gets raw bytes: the scan decodes nothing. */
  classify(line: Uint8Array): MessageRole | null;
  /** The cursor message of one message-entry line (`role` is what `classify` said). */
  toMessage(id: number, line: string, role: MessageRole): TranscriptMessage;
  /**
   * For a format whose files rewrite what they wrote (a later line stands for an earlier entry,
   * or copies entries already there): a fresh reader for one file, in place of `classify`. A line
   * with a key seen before rewrites that entry: it keeps its id and place, and pages read the
   * newer line. Absent: every line `classify` accepts is a new entry (an append-only log).
   */
  entries?(): LineReader;
}

/** The index's reader of a format's lines: its own, or each accepted line a new entry. */
export function lineReaderOf(format: TranscriptFormat): LineReader {
  if (format.entries) return format.entries();
  return (line) => {
    const role = format.classify(line);
    return role ? { role } : null;
  };
}

export function checkCursorQuery({ beforeId, limit, role }: CursorQuery) {
  if (!Number.isInteger(limit) || limit < 1 || limit > 200)
    throw new AgError("VALIDATION_ERROR", "limit must be an integer from 1 to 200");
  if (beforeId !== undefined && (!Number.isInteger(beforeId) || beforeId < 1))
    throw new AgError("VALIDATION_ERROR", "before_id must be a positive integer");
  if (role !== undefined && !(MESSAGE_ROLES as readonly string[]).includes(role))
    throw new AgError("VALIDATION_ERROR", "role must be user, assistant or system");
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/**
 * The raw bytes (escapes kept) of a JSON line's top-level string field `key` (given encoded), or
 * null. It skips string contents with native `indexOf` and only counts brackets outside them:
 * ~10× faster than decoding and JSON.parse, which is what makes the index scan cheap. Exact for
 * any valid JSON object line (a nested "type" is never taken for the top-level one).
 */
export function topLevelString(line: Uint8Array, key: Uint8Array): Uint8Array | null {
  const open = valueAt(line, key);
  if (open < 0 || line[open] !== QUOTE) return null;
  const valueEnd = stringEnd(line, open);
  return valueEnd < 0 ? null : line.subarray(open + 1, valueEnd);
}

/**
 * A format's `classify` for lines whose top-level string field `key` is the message role itself
 * ("user", "assistant", "system"; anything else, or no such field, is not a message line).
 */
export function roleNamedBy(key: string): (line: Uint8Array) => MessageRole | null {
  const encoder = new TextEncoder();
  const keyBytes = encoder.encode(key);
  const roles = MESSAGE_ROLES.map((role) => [role, encoder.encode(role)] as const);
  return (line) => {
    const value = topLevelString(line, keyBytes);
    if (!value) return null;
    for (const [role, bytes] of roles) if (sameBytes(value, bytes)) return role;
    return null;
  };
}

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/**
 * Where the value of the first key `key` at nesting `depth` (1: the line's own keys; objects and
 * arrays each count) begins, or -1: the same scan as topLevelString, for values of any type.
 */
export function valueAt(line: Uint8Array, key: Uint8Array, depth = 1): number {
  let level = 0;
  let i = 0;
  while (i < line.length) {
    const c = line[i]!;
    if (c === QUOTE) {
      const close = stringEnd(line, i);
      if (close < 0) return -1;
      const next = close + 1;
      const colon = skipSpaces(line, next);
      // Only a string followed by ":" is a key; the same word as a value is passed over.
      if (level === depth && line[colon] === 0x3a && close - i - 1 === key.length && hasAt(line, key, i + 1))
        return skipSpaces(line, colon + 1);
      i = next;
    } else {
      if (c === 0x7b || c === 0x5b) level++;
      else if (c === 0x7d || c === 0x5d) level--;
      i++;
    }
  }
  return -1;
}

/** Index of the quote closing the string that opens at `open`, or -1. */
function stringEnd(line: Uint8Array, open: number): number {
  let from = open + 1;
  for (;;) {
    const quote = line.indexOf(QUOTE, from);
    if (quote < 0) return -1;
    let slashes = 0;
    while (line[quote - 1 - slashes] === BACKSLASH) slashes++;
    if (slashes % 2 === 0) return quote;
    from = quote + 1;
  }
}

/** Whether `line` holds the bytes of `key` at `at`. */
export function hasAt(line: Uint8Array, key: Uint8Array, at: number): boolean {
  for (let k = 0; k < key.length; k++) if (line[at + k] !== key[k]) return false;
  return true;
}

function skipSpaces(line: Uint8Array, at: number): number {
  let i = at;
  while (line[i] === 0x20 || line[i] === 0x09 || line[i] === 0x0d || line[i] === 0x0a) i++;
  return i;
}
