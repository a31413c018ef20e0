import type { AgentAdapter, TranscriptLineMeaning, TranscriptReader } from "../../agents/agent.ts";
import type { Logger } from "../../shared/log.ts";
import type { CursorQuery, TranscriptCursorPage } from "../../transcript/cursor.ts";
import { createTranscriptIndex, type TranscriptIndex } from "../../transcript/index.ts";
import { createTranscriptTail, type TranscriptTail, watchTranscript } from "../../transcript/tail.ts";

/**
 * Follows one session's transcript file: a byte-offset tail woken by file-change events (no
 * timer), feeding the cursor index and the agent's reader line by line, in file order.
 */
export interface TranscriptFollower {
  readonly path: string | null;
  /**
   * Starts following `path`. With `history`, lines already in the file are taken as the past
   * (they build the index and the totals but publish nothing): re-adoption after a restart.
   */
  attach(path: string, history: boolean): Promise<void>;
  /** Reads whatever was appended since the last read. */
  catchUp(): Promise<void>;
  output(): string;
  /** The latest turn's end is in what was read (its prompt's turn, when one was read). */
  turnEnded(): boolean;
  summary(): ReturnType<TranscriptReader["summary"]>;
  tokensByModel(): ReturnType<TranscriptReader["tokensByModel"]>;
  /**
   * Waits (up to `timeoutMs`) until the latest turn's end is in the file: the agent reports the
   * end of a turn before it has flushed the turn's last lines. With `prompt`, the latest turn must
   * also be the one of the prompt it accepts (a turn that ended before its prompt's line was
   * written would otherwise read as the turn before).
   */
  settled(timeoutMs: number, prompt?: (lastPrompt: string | null) => boolean): Promise<void>;
  tokens(): ReturnType<TranscriptReader["tokens"]>;
  page(query: CursorQuery): Promise<TranscriptCursorPage>;
  stop(): void;
}

const EMPTY_PAGE: TranscriptCursorPage = { messages: [], has_more: false, oldest_id: 0, newest_id: 0 };

export function createTranscriptFollower(deps: {
  agent: Pick<AgentAdapter, "transcript">;
  /** The uid that must own the file: a tenant's runAs user (transcript/tail.ts openTranscript). */
  owner?: number;
  logger: Logger;
  onLine: (meaning: TranscriptLineMeaning) => void;
}): TranscriptFollower {
  let path: string | null = null;
  let index: TranscriptIndex | null = null;
  let tail: TranscriptTail | null = null;
  let reader = deps.agent.transcript.createReader();
  let unwatch: (() => void) | null = null;
  let reading: Promise<void> = Promise.resolve();
  const waiters = new Set<() => void>();

  async function drain(live: boolean): Promise<void> {
    if (!tail || !index) return;
    for (;;) {
      const read = await tail.read();
      if (read.truncated) reader = deps.agent.transcript.createReader();
      index.ingest(read);
      for (const line of read.lines) {
        const meaning = reader.add(line.text);
        if (live) deps.onLine(meaning);
      }
      if (read.lines.length) for (const wake of [...waiters]) wake();
      if (!read.more) return;
    }
  }

  function catchUp(): Promise<void> {
    // One read at a time, in order: lines are never fed twice or out of order.
    reading = reading
      .then(() => drain(true))
      .catch((error) => deps.logger.warn(`reading ${path} failed`, error));
    return reading;
  }

  return {
    get path() {
      return path;
    },
    async attach(next, history) {
      if (next === path) return;
      deps.logger.debug(`following transcript ${next}${history ? " (history first)" : ""}`);
      unwatch?.();
      path = next;
      index = createTranscriptIndex(next, deps.agent.transcript.format, { owner: deps.owner });
      tail = createTranscriptTail(next, { owner: deps.owner });
      reader = deps.agent.transcript.createReader();
      unwatch = watchTranscript(next, () => void catchUp());
      reading = reading
        .then(() => drain(!history))
        .catch((error) => deps.logger.warn(`reading ${next} failed`, error));
      await reading;
    },
    catchUp,
    output: () => reader.output(),
    turnEnded: () => reader.turnEnded(),
    summary: () => reader.summary(),
    tokensByModel: () => reader.tokensByModel(),
    async settled(timeoutMs, prompt) {
      const deadline = Date.now() + timeoutMs;
      const done = () => reader.turnEnded() && (!prompt || prompt(reader.summary().lastUserMessage));
      await catchUp();
      while (path && !done() && Date.now() < deadline) {
        await new Promise<void>((resolve) => {
          const wake = () => {
            waiters.delete(wake);
            clearTimeout(timer);
            resolve();
          };
          const timer = setTimeout(wake, deadline - Date.now());
          waiters.add(wake);
        });
      }
      // Out of time: whatever the file holds now is the best answer (a lost change event
      // must not cost the turn's text).
      if (path && !done()) await catchUp();
    },
    tokens: () => reader.tokens(),
    async page(query) {
      if (!index) return EMPTY_PAGE;
      await catchUp();
      return index.page(query);
    },
    stop() {
      unwatch?.();
      unwatch = null;
    },
  };
}
