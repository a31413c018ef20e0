import { maxTokens, NO_TOKENS } from "../vocabulary.ts";
import type { TokenTotals, TranscriptEntry, TranscriptLink } from "./transcript.ts";

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
  /** One line: its message entry (null for bookkeeping) and its place in the chain (if it has one). */
  add(entry: TranscriptEntry | null, link?: TranscriptLink | null): void;
  snapshot(): TranscriptSnapshot;
}

/**
 * Blocks of one message repeat its usage on every line, and streaming can write an early line
 * with a smaller output count first. Those lines sit close together, so a window of recent ids
 * de-duplicates exactly without keeping every id of a long session.
 */
const RECENT_IDS = 10_000;

/**
 * Folds parsed entries into what ag reports: tokens, `/read` output, tool counts. Counts follow
 * the file; the turn (its text, whether it ended) follows the parent links where they are known:
 * Claude Code has written a reply's line above its prompt's (a busy machine, a consensus
 * reviewer's answer then read as empty), and a turn's late line can come after the next prompt.
 * A line whose parent has not been read yet counts for the turn in progress, as in file order,
 * and waits: once its parent places it in a later turn, that turn gets its text too.
 */
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
  /** The turn in progress: its prompt's uuid ("" before the first, or a prompt without one). */
  let turnId = "";
  /** Bumped by each prompt: a waiting line knows whether a prompt came since it was read. */
  let prompts = 0;
  /** The turn of each recent line of the main conversation, by uuid. */
  const turnOf = new Map<string, string>();
  /** Lines read before their parent, by the parent's uuid. */
  const waiting = new Map<string, Array<{ uuid: string; entry: TranscriptEntry | null; prompts: number }>>();
  let waitingCount = 0;

  function countUsage(id: string, model: string | null, usage: TokenTotals) {
    const previous = usageById.get(id) ?? zero();
    const merged = maxTokens(previous, usage);
    usageById.delete(id); // re-insert: the Map's order is then recency
    usageById.set(id, merged);
    if (usageById.size > RECENT_IDS) usageById.delete(usageById.keys().next().value!);
    addInto(tokens, merged, previous);
    if (!model) return;
    byModel[model] ??= zero();
    addInto(byModel[model], merged, previous);
  }

  function countAssistant(entry: Extract<TranscriptEntry, { kind: "assistant" }>) {
    if (entry.usage && entry.messageId && entry.model !== "<synthetic>")
      countUsage(entry.messageId, entry.model, entry.usage);
    for (const block of entry.blocks) {
      if (block.type === "tool_use" && isNew(toolIds, block.id)) {
        toolCalls++;
        toolCallsByName[block.name] = (toolCallsByName[block.name] ?? 0) + 1;
      }
    }
  }

  /** What the entry does to the turn in progress: its text, its end. */
  function applyToTurn(entry: TranscriptEntry) {
    if (entry.kind === "assistant") {
      if (!entry.sidechain)
        for (const block of entry.blocks) if (block.type === "text") texts.push(block.text);
      return;
    }
    if (entry.sidechain) return; // a sub-agent's prompts and errors are not the conversation's turn
    if (entry.kind === "prompt") {
      lastPrompt = { text: entry.text, timestamp: entry.timestamp };
      texts = [];
      turn = { ended: false, endReason: null, durationMs: null };
      turnId = entry.uuid ?? "";
      prompts++;
    } else if (entry.kind === "interrupt") {
      turn = { ...turn, ended: true, endReason: "interrupted" };
    } else if (entry.kind === "api_error") {
      texts.push(entry.text); // as Claude Code's own last_assistant_message does
      turn = { ...turn, ended: true, endReason: "api_error" };
    } else if (entry.kind === "system" && entry.subtype === "turn_duration") {
      turn = { ended: true, endReason: turn.endReason ?? "completed", durationMs: entry.durationMs };
    }
  }

  /** The turn a line belongs to by its links; undefined while its parent is unread. */
  function turnOfLine(entry: TranscriptEntry | null, link: TranscriptLink): string | undefined {
    if (entry?.kind === "prompt") return link.uuid;
    return link.parentUuid === null ? turnId : turnOf.get(link.parentUuid);
  }

  /** The line's turn is known: so is that of every line that waited for it. */
  function place(uuid: string, lineTurn: string) {
    const stack = [{ uuid, lineTurn }];
    while (stack.length) {
      const next = stack.pop()!;
      remember(next.uuid, next.lineTurn);
      const children = waiting.get(next.uuid) ?? [];
      waiting.delete(next.uuid);
      waitingCount -= children.length;
      for (const child of children) {
        // Counted for a turn before this one (in file order): this one gets it now.
        if (child.entry && next.lineTurn === turnId && child.prompts !== prompts) applyToTurn(child.entry);
        stack.push({ uuid: child.uuid, lineTurn: next.lineTurn });
      }
    }
  }

  function remember(uuid: string, lineTurn: string) {
    turnOf.set(uuid, lineTurn);
    if (turnOf.size > RECENT_IDS) turnOf.delete(turnOf.keys().next().value!);
  }

  function wait(parent: string, uuid: string, entry: TranscriptEntry | null) {
    const list = waiting.get(parent) ?? [];
    list.push({ uuid, entry, prompts });
    waiting.set(parent, list);
    // A parent that never comes (a line ag never saw) must not hold memory forever.
    if (++waitingCount > RECENT_IDS) {
      const [oldest, dropped] = waiting.entries().next().value!;
      waiting.delete(oldest);
      waitingCount -= dropped.length;
    }
  }

  function add(entry: TranscriptEntry | null, link?: TranscriptLink | null) {
    const linked = link && !link.sidechain ? link : null;
    const lineTurn = linked ? turnOfLine(entry, linked) : undefined;
    if (entry) {
      entries++;
      lastEntryAt = entry.timestamp ?? lastEntryAt;
      if (entry.kind === "assistant") countAssistant(entry);
      if (entry.kind === "tool_result") toolErrors += entry.results.filter((r) => r.isError).length;
      if (entry.kind === "api_error" && !entry.sidechain)
        lastApiError = {
          error: entry.error,
          status: entry.status,
          text: entry.text,
          timestamp: entry.timestamp,
        };
      // A line of an earlier turn read late changes nothing of this one.
      if (lineTurn === undefined || lineTurn === turnId || entry.kind === "prompt") applyToTurn(entry);
    }
    if (!linked) return;
    if (lineTurn === undefined) wait(linked.parentUuid!, linked.uuid, entry);
    else place(linked.uuid, lineTurn);
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

const zero = (): TokenTotals => ({ ...NO_TOKENS });

/** target += next - previous, field by field. */
function addInto(target: TokenTotals, next: TokenTotals, previous: TokenTotals) {
  target.input += next.input - previous.input;
  target.output += next.output - previous.output;
  target.cacheRead += next.cacheRead - previous.cacheRead;
  target.cacheCreation += next.cacheCreation - previous.cacheCreation;
}
