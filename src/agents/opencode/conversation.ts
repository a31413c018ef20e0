import { readFile, writeFile } from "node:fs/promises";
import {
  type MessageKind,
  type MessageRole,
  roleNamedBy,
  type TranscriptFormat,
  type TranscriptMessage,
} from "../../transcript/cursor.ts";
import { countsOf, type Json, parseJsonLine, str } from "../json-fields.ts";
import { toolUseFields } from "../messages.ts";
import { NO_TOKENS, type TokenCounts } from "../vocabulary.ts";

/**
 * The conversation file ag's plugin writes for an OpenCode session (plugin.js): one JSON object
 * a line, appended once each, in the order OpenCode finished them. Message lines carry `role`
 * and `kind`; bookkeeping lines a `type` instead: `session` (an OpenCode session of this process:
 * its id, and its parent for a sub-agent's) and `usage` (the tokens of one model call).
 * `sidechain` marks a sub-agent's lines, `copied` the messages a fork copied from its parent.
 */

interface LineBase {
  /** The plugin's id of the line: OpenCode's part or message id, with a suffix for derived lines. */
  id: string;
  at: string | null;
  session: string;
  /** OpenCode's message id. */
  message: string | null;
  sidechain: boolean;
  copied: boolean;
}

export type ConversationEntry = LineBase &
  (
    | {
        kind: "prompt" | "text" | "thinking" | "interrupt";
        role: MessageRole;
        text: string;
        model: string | null;
      }
    | { kind: "tool_use"; role: "assistant"; tool: string; callID: string; input: unknown }
    | { kind: "tool_result"; role: "user"; tool: string; callID: string; text: string; isError: boolean }
    | { kind: "api_error"; role: "assistant"; text: string; error: string | null; status: number | null }
    | { kind: "system"; role: "system"; subtype: string }
    | { kind: "usage"; model: string | null; tokens: TokenCounts }
    | { kind: "session"; parent: string | null }
  );

const ROLES: readonly string[] = ["user", "assistant", "system"];

/** One line of the file, typed; null for anything else (a torn last line, another format). */
export function parseConversationLine(text: string): ConversationEntry | null {
  const line = parseJsonLine(text) as Json | null | undefined;
  if (typeof line !== "object" || line === null || typeof line.id !== "string") return null;
  const base: LineBase = {
    id: line.id,
    at: str(line.at),
    session: str(line.session) ?? "",
    message: str(line.message),
    sidechain: line.sidechain === true,
    copied: line.copied === true,
  };
  if (line.type === "session") return { ...base, kind: "session", parent: str(line.parent) };
  if (line.type === "usage")
    return { ...base, kind: "usage", model: str(line.model), tokens: tokensOf(line.tokens) };
  const role = str(line.role);
  if (!role || !ROLES.includes(role)) return null;
  return { ...base, ...messageOf(line, role as MessageRole) };
}

function messageOf(line: Json, role: MessageRole) {
  const text = str(line.text) ?? "";
  // The tool call a tool_use or tool_result line is about.
  const call = { tool: str(line.tool) ?? "", callID: str(line.callID) ?? "" };
  switch (line.kind) {
    case "tool_use":
      return { kind: "tool_use", role: "assistant", ...call, input: line.input } as const;
    case "tool_result":
      return { kind: "tool_result", role: "user", ...call, text, isError: line.isError === true } as const;
    case "api_error":
      return {
        kind: "api_error",
        role: "assistant",
        text,
        error: str(line.error),
        status: typeof line.status === "number" ? line.status : null,
      } as const;
    case "system":
      return { kind: "system", role: "system", subtype: str(line.subtype) ?? "" } as const;
    default: {
      const kind =
        line.kind === "prompt" || line.kind === "thinking" || line.kind === "interrupt" ? line.kind : "text";
      return { kind, role, text, model: str(line.model) } as const;
    }
  }
}

function tokensOf(value: unknown): TokenCounts {
  return countsOf(value, ["input", "output", "cacheRead", "cacheCreation"]) ?? { ...NO_TOKENS };
}

/** OpenCode's message ids hold their creation time in 48 bits: ms × 4096 + a counter, wrapping. */
const ID_TIME = /^msg_([0-9a-f]{12})/;
const ID_WRAP_MS = 2 ** 36;

/**
 * Where a line falls in time, in OpenCode's own terms: a message line when its message was made
 * (OpenCode's message ids are ascending: `msg_` and 12 hex digits of its creation ms × 4096 plus
 * a counter, kept to 48 bits, so the ms are known up to 2^36 ms ≈ 795 days, placed as the latest
 * such time not after the line was written); any other line when it was written (`at`, the same
 * clock: the plugin runs in OpenCode's process). In ms, the counter as a fraction. Null: neither.
 */
export function orderOf(entry: Pick<LineBase, "message" | "at">): number | null {
  const written = entry.at ? Date.parse(entry.at) : Number.NaN;
  const hex = entry.message ? ID_TIME.exec(entry.message)?.[1] : undefined;
  if (hex === undefined) return Number.isFinite(written) ? written + 4095 / 4096 : null;
  const value = Number.parseInt(hex, 16);
  const ms = Math.floor(value / 4096);
  const counter = value % 4096;
  const full = Number.isFinite(written)
    ? written - ((((written - ms) % ID_WRAP_MS) + ID_WRAP_MS) % ID_WRAP_MS)
    : ms;
  return full + counter / 4096;
}

/** The OpenCode conversation (a main one, not a sub-agent's) the file names last, or null. */
export async function lastConversation(file: string): Promise<string | null> {
  return (await conversationsNamed(file)).at(-1) ?? null;
}

/** The OpenCode conversations (main ones, not sub-agents') the file names, in order. */
export async function conversationsNamed(file: string): Promise<string[]> {
  const text = await readFile(file, "utf8").catch(() => "");
  const named: string[] = [];
  for (const line of text.split("\n")) {
    const entry = line.trim() ? parseConversationLine(line) : null;
    if (entry?.kind === "session" && entry.parent === null && entry.session) named.push(entry.session);
  }
  return named;
}

/**
 * A fork's conversation file, begun as a copy of its parent's (each line marked `copied`: history,
 * not news) and naming the fork's own OpenCode conversation last, for a later resume of the fork.
 */
export async function copyConversation(from: string, to: string, session: string): Promise<void> {
  const lines = (await readFile(from, "utf8").catch(() => ""))
    .split("\n")
    .filter((line) => parseConversationLine(line) !== null)
    .map((line) => JSON.stringify({ ...JSON.parse(line), copied: true }));
  const own = {
    type: "session",
    session,
    parent: null,
    id: `session:${session}`,
    at: new Date().toISOString(),
  };
  await writeFile(to, [...lines, JSON.stringify(own)].map((line) => `${line}\n`).join(""), { flag: "wx" });
}

// ── The cursor's view of a line ─────────────────────────────────────────────────────────────────

function toMessage(id: number, line: string, role: MessageRole): TranscriptMessage {
  const entry = parseConversationLine(line);
  const empty = { id, role, kind: "other" as MessageKind, text: "", timestamp: null, uuid: null };
  if (!entry || entry.kind === "session" || entry.kind === "usage") return empty;
  const base = {
    id,
    role: entry.role,
    timestamp: entry.at,
    uuid: entry.id,
    ...(entry.message ? { messageId: entry.message } : {}),
    ...(entry.sidechain ? { sidechain: true } : {}),
  };
  switch (entry.kind) {
    case "tool_use":
      return { ...base, ...toolUseFields(entry.tool, entry.callID, entry.input) };
    case "tool_result":
      return {
        ...base,
        kind: "tool_result",
        text: entry.text,
        toolName: entry.tool,
        toolUseId: entry.callID,
        isError: entry.isError,
      };
    case "api_error":
      return { ...base, kind: "api_error", text: entry.text, isError: true };
    case "system":
      return { ...base, kind: "system", text: "", subtype: entry.subtype };
    default:
      return { ...base, kind: entry.kind, text: entry.text, ...(entry.model ? { model: entry.model } : {}) };
  }
}

/** The cursor pages the message lines (those with a `role`); session and usage lines are bookkeeping. */
export const opencodeConversationFormat: TranscriptFormat = {
  classify: roleNamedBy("role"),
  toMessage,
};
