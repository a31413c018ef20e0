import { readdir, realpath, stat } from "node:fs/promises";
import { join } from "node:path";
import { AgError } from "../../shared/errors.ts";
import {
  type MessageKind,
  type MessageRole,
  type TranscriptFormat,
  type TranscriptMessage,
  topLevelString,
} from "../../transcript/cursor.ts";

// ── Where Claude Code writes a session's transcript ─────────────────────────────────────────────

/** Claude Code caps the project folder name here and appends a hash of the full path. */
const MAX_PROJECT_DIR = 200;

/**
 * The project folder name Claude Code derives from its launch cwd: every non-alphanumeric UTF-16
 * unit becomes "-"; past 200 characters, the first 200 + "-" + base-36 of |Java-style hashCode| of
 * the ORIGINAL path (read from the 2.1.197 binary: `(h << 5) - h + charCodeAt(i) | 0`).
 */
export function encodeProjectDir(cwd: string): string {
  const encoded = cwd.replace(/[^a-zA-Z0-9]/g, "-");
  if (encoded.length <= MAX_PROJECT_DIR) return encoded;
  let hash = 0;
  for (let i = 0; i < cwd.length; i++) hash = ((hash << 5) - hash + cwd.charCodeAt(i)) | 0;
  return `${encoded.slice(0, MAX_PROJECT_DIR)}-${Math.abs(hash).toString(36)}`;
}

/** `<dataDir>/projects/<encoded cwd>/<sessionId>.jsonl` (dataDir = ~/.claude or CLAUDE_CONFIG_DIR). */
export function transcriptPath(dataDir: string, workDir: string, sessionId: string): string {
  return join(dataDir, "projects", encodeProjectDir(workDir), `${checkSessionId(sessionId)}.jsonl`);
}

/**
 * The transcript of `sessionId`, or null. Tries the computed path (the real path first: Claude Code
 * sees the cwd with symlinks resolved), then scans `projects/*`: 2.1.224 changed the rule for
 * paths over 200 characters, so only the scan is exact across releases. Several hits: newest wins.
 */
export async function findTranscript(
  dataDir: string,
  sessionId: string,
  workDir?: string,
): Promise<string | null> {
  const fileName = `${checkSessionId(sessionId)}.jsonl`;
  if (workDir) {
    const real = await realpath(workDir).catch(() => workDir);
    for (const dir of new Set([real, workDir])) {
      const path = transcriptPath(dataDir, dir, sessionId);
      if (await stat(path).catch(() => null)) return path;
    }
  }
  const projects = join(dataDir, "projects");
  const dirs = await readdir(projects, { withFileTypes: true }).catch(() => []);
  let best: { path: string; mtime: number } | null = null;
  for (const dir of dirs) {
    if (!dir.isDirectory()) continue;
    const path = join(projects, dir.name, fileName);
    const info = await stat(path).catch(() => null);
    if (info && (!best || info.mtimeMs > best.mtime)) best = { path, mtime: info.mtimeMs };
  }
  return best?.path ?? null;
}

function checkSessionId(sessionId: string): string {
  if (!/^[A-Za-z0-9_-]+$/.test(sessionId)) throw new AgError("VALIDATION_ERROR", "invalid agent session id");
  return sessionId;
}

// ── One line → a typed entry ────────────────────────────────────────────────────────────────────

export interface TokenTotals {
  input: number;
  output: number;
  cacheRead: number;
  cacheCreation: number;
}

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
    | { kind: "prompt"; role: "user"; text: string; source: string | null; promptId: string | null }
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
    | { kind: "system"; role: "system"; subtype: string; durationMs: number | null; content: string | null }
  );

type Json = Record<string, unknown>;
const INTERRUPT = "[Request interrupted by user";

/**
 * A transcript line as a typed entry, or null for a line that is not a message entry: bookkeeping
 * (mode, permission-mode, file-history-snapshot, ai-title, last-prompt, attachment, progress …) or
 * anything that is not JSON. Message entries are exactly the `user`, `assistant` and `system` lines.
 */
export function parseTranscriptLine(text: string): TranscriptEntry | null {
  let line: Json;
  try {
    line = JSON.parse(text);
  } catch {
    return null;
  }
  if (typeof line !== "object" || line === null) return null;
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
    return {
      ...base,
      kind: "system",
      role: "system",
      subtype: str(line.subtype) ?? "",
      durationMs,
      content: str(line.content),
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
  if (human && (origin === null || origin === "human"))
    return {
      kind: "prompt",
      role: "user",
      text,
      source: str(line.promptSource),
      promptId: str(line.promptId),
    } as const;
  return { kind: "user_text", role: "user", text } as const;
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
  if (!isObject(usage)) return null;
  const n = (v: unknown) => (typeof v === "number" && Number.isFinite(v) ? v : 0);
  return {
    input: n(usage.input_tokens),
    output: n(usage.output_tokens),
    cacheRead: n(usage.cache_read_input_tokens),
    cacheCreation: n(usage.cache_creation_input_tokens),
  };
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
  return {
    kind: "tool_use" as MessageKind,
    text,
    toolName: first.name,
    toolUseId: first.id,
    toolInput: first.input,
  };
}

function blockText(block: AssistantBlock): string {
  if (block.type === "text" || block.type === "thinking") return block.text;
  if (block.type === "tool_use") return JSON.stringify(block.input ?? null);
  return "";
}

const TYPE_KEY = new TextEncoder().encode("type");
const ROLE_BYTES = (["user", "assistant", "system"] as const).map(
  (role) => [role, new TextEncoder().encode(role)] as const,
);

/** Claude Code's transcript for the cursor index: message entries are the user/assistant/system lines. */
export const claudeTranscriptFormat: TranscriptFormat = {
  classify(line) {
    const type = topLevelString(line, TYPE_KEY);
    if (!type) return null;
    for (const [role, bytes] of ROLE_BYTES) if (sameBytes(type, bytes)) return role;
    return null;
  },
  toMessage: toCursorMessage,
};

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

// ── What the transcript says so far ─────────────────────────────────────────────────────────────

export type TurnEnd = "completed" | "interrupted" | "api_error";

export interface TranscriptSnapshot {
  /** Every assistant message counted once (by message id), with its largest usage figures. */
  tokens: TokenTotals;
  tokensByModel: Record<string, TokenTotals>;
  /** The last person's prompt. */
  lastPrompt: { text: string; timestamp: string | null } | null;
  turn: {
    /** `/read`: the main conversation's assistant text since the last prompt, blocks joined by "\n". */
    output: string;
    ended: boolean;
    endReason: TurnEnd | null;
    durationMs: number | null;
  };
  toolCalls: number;
  toolCallsByName: Record<string, number>;
  toolErrors: number;
  lastApiError: {
    error: string | null;
    status: number | null;
    text: string;
    timestamp: string | null;
  } | null;
  /** Message entries seen. */
  entries: number;
  lastEntryAt: string | null;
}

export interface TranscriptState {
  add(entry: TranscriptEntry): void;
  snapshot(): TranscriptSnapshot;
}

/**
 * Blocks of one message repeat its usage on every line, and streaming can write an early line
 * with a smaller output count first. Those lines sit close together, so a window of recent ids
 * de-duplicates exactly without keeping every id of a long session.
 */
const RECENT_IDS = 10_000;

/** Folds parsed entries, in file order, into what ag reports: tokens, `/read` output, tool counts. */
export function createTranscriptState(): TranscriptState {
  const tokens = zero();
  const byModel: Record<string, TokenTotals> = {};
  const usageById = new Map<string, TokenTotals>();
  const toolIds = new Set<string>(); // recent ones only, like usageById
  let toolCalls = 0;
  const toolCallsByName: Record<string, number> = {};
  let texts: string[] = [];
  let turn: Omit<TranscriptSnapshot["turn"], "output"> = { ended: false, endReason: null, durationMs: null };
  let lastPrompt: TranscriptSnapshot["lastPrompt"] = null;
  let lastApiError: TranscriptSnapshot["lastApiError"] = null;
  let toolErrors = 0;
  let entries = 0;
  let lastEntryAt: string | null = null;

  function countUsage(id: string, model: string | null, usage: TokenTotals) {
    const previous = usageById.get(id) ?? zero();
    const merged = maxOf(previous, usage);
    usageById.delete(id); // re-insert: the Map's order is then recency
    usageById.set(id, merged);
    if (usageById.size > RECENT_IDS) usageById.delete(usageById.keys().next().value!);
    addInto(tokens, merged, previous);
    if (!model) return;
    byModel[model] ??= zero();
    addInto(byModel[model], merged, previous);
  }

  function addAssistant(entry: Extract<TranscriptEntry, { kind: "assistant" }>) {
    if (entry.usage && entry.messageId && entry.model !== "<synthetic>")
      countUsage(entry.messageId, entry.model, entry.usage);
    for (const block of entry.blocks) {
      if (block.type === "text" && !entry.sidechain) texts.push(block.text);
      if (block.type === "tool_use" && isNew(toolIds, block.id)) {
        toolCalls++;
        toolCallsByName[block.name] = (toolCallsByName[block.name] ?? 0) + 1;
      }
    }
  }

  function add(entry: TranscriptEntry) {
    entries++;
    lastEntryAt = entry.timestamp ?? lastEntryAt;
    if (entry.kind === "assistant") return addAssistant(entry);
    if (entry.kind === "tool_result") {
      toolErrors += entry.results.filter((r) => r.isError).length;
      return;
    }
    if (entry.sidechain) return; // a sub-agent's prompts and errors are not the conversation's turn
    if (entry.kind === "prompt") {
      lastPrompt = { text: entry.text, timestamp: entry.timestamp };
      texts = [];
      turn = { ended: false, endReason: null, durationMs: null };
    } else if (entry.kind === "interrupt") {
      turn = { ...turn, ended: true, endReason: "interrupted" };
    } else if (entry.kind === "api_error") {
      texts.push(entry.text); // as Claude Code's own last_assistant_message does
      lastApiError = {
        error: entry.error,
        status: entry.status,
        text: entry.text,
        timestamp: entry.timestamp,
      };
      turn = { ...turn, ended: true, endReason: "api_error" };
    } else if (entry.kind === "system" && entry.subtype === "turn_duration") {
      turn = { ended: true, endReason: turn.endReason ?? "completed", durationMs: entry.durationMs };
    }
  }

  return {
    add,
    snapshot: () => ({
      tokens: { ...tokens },
      tokensByModel: Object.fromEntries(Object.entries(byModel).map(([m, t]) => [m, { ...t }])),
      lastPrompt,
      turn: { ...turn, output: texts.join("\n") },
      toolCalls,
      toolCallsByName: { ...toolCallsByName },
      toolErrors,
      lastApiError,
      entries,
      lastEntryAt,
    }),
  };
}

/** Records `id` in a set of the last RECENT_IDS ids; false when it was already there. */
function isNew(recent: Set<string>, id: string): boolean {
  if (recent.has(id)) return false;
  recent.add(id);
  if (recent.size > RECENT_IDS) recent.delete(recent.values().next().value!);
  return true;
}

const zero = (): TokenTotals => ({ input: 0, output: 0, cacheRead: 0, cacheCreation: 0 });

function maxOf(a: TokenTotals, b: TokenTotals): TokenTotals {
  return {
    input: Math.max(a.input, b.input),
    output: Math.max(a.output, b.output),
    cacheRead: Math.max(a.cacheRead, b.cacheRead),
    cacheCreation: Math.max(a.cacheCreation, b.cacheCreation),
  };
}

/** target += next - previous, field by field. */
function addInto(target: TokenTotals, next: TokenTotals, previous: TokenTotals) {
  target.input += next.input - previous.input;
  target.output += next.output - previous.output;
  target.cacheRead += next.cacheRead - previous.cacheRead;
  target.cacheCreation += next.cacheCreation - previous.cacheCreation;
}

const str = (v: unknown): string | null => (typeof v === "string" ? v : null);
const isObject = (v: unknown): v is Json => typeof v === "object" && v !== null && !Array.isArray(v);
