import type { AgentAdapter, DriverName, TranscriptLineMeaning } from "../agents/agent.ts";
import type { AgentRegistry } from "../agents/registry.ts";
import { maxTokens, NO_TOKENS } from "../agents/vocabulary.ts";
import { type Tokens, transcriptSource } from "../sessions/index.ts";
import type { Logger } from "../shared/log.ts";
import { createTranscriptTail, type TranscriptTail } from "../transcript/tail.ts";

/** Tokens of messages whose model the transcript does not name: unpriced, never guessed. */
export const UNKNOWN_MODEL = "unknown";

export interface LedgerSnapshot {
  tokens: Tokens;
  tokensByModel: Record<string, Tokens>;
  /** Distinct agent messages counted. */
  messages: number;
  /**
   * Each transcript's own tokens by model (a fork's copy of its parent's messages counts in both
   * files here: what each session's conversation holds, not what the server spent).
   */
  byTranscript: Record<string, Record<string, Tokens>>;
}

/**
 * Token totals across every session's transcript, each agent message counted once by its id:
 * a message's lines repeat its usage, and a fork's transcript starts with a copy of its
 * parent's conversation, so summing the sessions' own totals would count both twice.
 *
 * Light on purpose: each transcript is tailed from the byte offset reached at the previous
 * refresh, so a scrape costs one stat per transcript plus the lines appended since; only the
 * first refresh after start reads whole files. The price is one small entry per message for the
 * life of the process. A transcript whose session is pruned stops being read, but what it added
 * stays counted: the totals never go down while ag runs (they are counters).
 */
/** A session's transcript, and the agent (and its version, null: unknown) that writes it. */
/** `owner`: the uid that must own the file (a tenant's runAs user; transcript/tail.ts openTranscript). */
/** `driver`: who writes the file (a headless session's is ag's own record of the protocol). */
export type TranscriptFile = {
  path: string;
  agent: string;
  agentVersion?: string | null;
  owner?: number;
  driver?: DriverName;
};

export interface TokenLedger {
  /**
   * Reads what the transcripts gained since the last refresh (each read by its agent's reader, as
   * of the version its session ran).
   */
  refresh(files: ReadonlyArray<TranscriptFile>): Promise<void>;
  snapshot(): LedgerSnapshot;
}

/** What reads a transcript's lines: its agent's reader, or ag's own for a headless session. */
type TranscriptSource = { transcript: Pick<AgentAdapter["transcript"], "createReader"> };

export function createTokenLedger(deps: { agents: Pick<AgentRegistry, "get">; logger: Logger }): TokenLedger {
  const byMessage = new Map<string, { model: string; tokens: Tokens }>();
  const totals = zero();
  const byModel: Record<string, Tokens> = {};
  const tails = new Map<string, TranscriptTail>();
  /** Per transcript: its messages' tokens (max-merged like the totals) and their sums by model. */
  const perFile = new Map<string, { byMessage: Map<string, Tokens>; byModel: Record<string, Tokens> }>();
  let running: Promise<void> | null = null;

  function countIn(path: string, usage: NonNullable<TranscriptLineMeaning["usage"]>, model: string): void {
    let file = perFile.get(path);
    if (!file) {
      file = { byMessage: new Map(), byModel: {} };
      perFile.set(path, file);
    }
    const previous = file.byMessage.get(usage.messageId) ?? zero();
    const merged = maxTokens(previous, usage.tokens);
    file.byMessage.set(usage.messageId, merged);
    file.byModel[model] ??= zero();
    for (const key of KEYS) file.byModel[model][key] += merged[key] - previous[key];
  }

  function count(usage: NonNullable<TranscriptLineMeaning["usage"]>): string {
    const seen = byMessage.get(usage.messageId);
    const model = seen?.model ?? usage.model ?? UNKNOWN_MODEL;
    const previous = seen?.tokens ?? zero();
    const merged = maxTokens(previous, usage.tokens);
    byMessage.set(usage.messageId, { model, tokens: merged });
    byModel[model] ??= zero();
    for (const key of KEYS) {
      const delta = merged[key] - previous[key];
      totals[key] += delta;
      byModel[model][key] += delta;
    }
    return model;
  }

  async function read(path: string, source: TranscriptSource, tail: TranscriptTail): Promise<void> {
    // A fresh reader per batch: only each line's own meaning is needed, not the conversation's
    // state, and re-reading a line (a truncated file read again) is harmless under max-merge.
    const reader = source.transcript.createReader();
    for (;;) {
      const batch = await tail.read();
      for (const line of batch.lines) {
        const usage = reader.add(line.text).usage;
        if (usage) countIn(path, usage, count(usage));
      }
      if (!batch.more) return;
    }
  }

  async function refreshAll(files: ReadonlyArray<TranscriptFile>): Promise<void> {
    const wanted = new Map(files.map((f) => [f.path, f]));
    for (const path of tails.keys()) {
      if (wanted.has(path)) continue;
      tails.delete(path);
      perFile.delete(path);
    }
    for (const [path, { agent, agentVersion, owner, driver = "tmux" }] of wanted) {
      let tail = tails.get(path);
      if (!tail) {
        tail = createTranscriptTail(path, { owner });
        tails.set(path, tail);
      }
      // One unreadable transcript must not take the metrics down: it is tried again next time.
      const source = transcriptSource({ driver }, deps.agents.get(agent, agentVersion));
      await read(path, source, tail).catch((error) =>
        deps.logger.warn(`metrics: reading ${path} failed`, error),
      );
    }
  }

  return {
    refresh(paths) {
      // Concurrent scrapes share one pass over the files.
      running ??= refreshAll(paths).finally(() => {
        running = null;
      });
      return running;
    },
    snapshot: () => ({
      tokens: { ...totals },
      tokensByModel: Object.fromEntries(Object.entries(byModel).map(([m, t]) => [m, { ...t }])),
      messages: byMessage.size,
      byTranscript: Object.fromEntries(
        [...perFile].map(([path, file]) => [
          path,
          Object.fromEntries(Object.entries(file.byModel).map(([m, t]) => [m, { ...t }])),
        ]),
      ),
    }),
  };
}

const KEYS = ["input", "output", "cacheRead", "cacheCreation"] as const;

function zero(): Tokens {
  return { ...NO_TOKENS };
}
