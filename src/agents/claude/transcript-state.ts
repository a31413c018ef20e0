import type { TokenTotals, TranscriptEntry } from "./transcript.ts";

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
