import { stat } from "node:fs/promises";
import type { TranscriptFormat, TranscriptMessage } from "../transcript/cursor.ts";
import { createTranscriptIndex, type TranscriptIndex } from "../transcript/index.ts";
import type { SearchRole } from "./search.ts";
import type { SearchStore, TurnRow } from "./store.ts";

/** One conversation's file as the transcript cursor reads it. */
export interface TranscriptFile {
  path: string;
  format: TranscriptFormat;
  /** The uid that must own the file (a tenant's runAs user): transcript/tail.ts openTranscript. */
  owner?: number;
}

/** Entries read per cursor page while catching up (the cursor's largest page). */
const PAGE = 200;
/** The characters of one turn part that are indexed: a tool's huge output is searched by its start. */
export const MAX_TURN_CHARS = 64 * 1024;

/** What a cursor message is to search: its role, or null for what is not searched (thinking, bookkeeping). */
export function searchRole(message: TranscriptMessage): SearchRole | null {
  switch (message.kind) {
    case "prompt":
      return "prompt";
    case "text":
      return message.role === "assistant" ? "answer" : null;
    case "tool_use":
    case "tool_result":
      return "tool";
    default:
      return null;
  }
}

/** The turn part a cursor message is indexed as, or null. */
export function toTurn(message: TranscriptMessage): TurnRow | null {
  const role = searchRole(message);
  if (!role) return null;
  const text =
    message.kind === "tool_use" ? `${message.toolName ?? ""} ${message.text}`.trim() : message.text;
  if (!text.trim()) return null;
  return { messageId: message.id, role, at: isoTime(message.timestamp), text: text.slice(0, MAX_TURN_CHARS) };
}

function isoTime(timestamp: string | null): string | null {
  if (!timestamp) return null;
  const ms = Date.parse(timestamp);
  return Number.isNaN(ms) ? null : new Date(ms).toISOString();
}

/**
 * Keeps one source's rows in step with its file: the file's cursor index (transcript/index.ts, the
 * same one GET /transcript/cursor pages) is scanned for what was appended, and the messages after
 * the last one indexed are added. In a format that rewrites entries (Gemini), the last indexed one
 * is read again each time (it may have grown). A file that shrank or was replaced is indexed anew.
 */
export function createSourceIndexer(store: SearchStore, sourceId: string, file: TranscriptFile) {
  let index: TranscriptIndex = createTranscriptIndex(file.path, file.format, { owner: file.owner });
  let first: string | null = null;

  return {
    path: file.path,
    /** Indexes what is new; returns the turn parts added. */
    async catchUp(): Promise<number> {
      const info = await stat(file.path).catch(() => null);
      if (!info) return 0;
      await index.scan();
      const row = store.source(sourceId);
      if (!row) return 0;
      const newest = index.count; // lines written from now on are the next catch-up's
      let from = file.format.entries ? Math.max(1, row.indexedId) : row.indexedId + 1;
      if (newest < row.indexedId) from = 1; // shrank or replaced: start over
      if (from > newest) {
        // Nothing new: the progress row is written only when the file changed (a busy session's
        // events wake many passes that find nothing).
        if (
          row.indexedId !== newest ||
          row.fileSize !== info.size ||
          row.fileMtimeMs !== Math.floor(info.mtimeMs)
        )
          store.saveProgress(sourceId, newest, info);
        return 0;
      }
      store.forgetFrom(sourceId, from);
      let added = 0;
      for await (const messages of pagesFrom(index, from, newest)) {
        const turns = messages.map(toTurn).filter((t): t is TurnRow => t !== null);
        store.addTurns(sourceId, turns);
        added += turns.length;
        first = firstPrompt(messages) ?? first;
      }
      if (first) store.nameIfUntitled(sourceId, first);
      store.saveProgress(sourceId, newest, info);
      return added;
    },
    /** Forgets the file's cursor index (a rebuild reads it again). */
    reset(): void {
      index = createTranscriptIndex(file.path, file.format, { owner: file.owner });
    },
  };
}

export type SourceIndexer = ReturnType<typeof createSourceIndexer>;

/**
 * Indexes a conversation read whole from a store shared by many (not a file of its own: OpenCode's
 * database): its rows are replaced by these messages', and `stamp` (the conversation's last change
 * there) is kept where a file's mtime would be. Returns the turn parts added.
 */
export function indexStoredConversation(
  store: SearchStore,
  sourceId: string,
  messages: readonly TranscriptMessage[],
  stamp: number,
): number {
  const turns = messages.map(toTurn).filter((t): t is TurnRow => t !== null);
  store.forgetFrom(sourceId, 1);
  store.addTurns(sourceId, turns);
  const first = firstPrompt(messages);
  if (first) store.nameIfUntitled(sourceId, first);
  store.saveProgress(sourceId, messages.length, { size: messages.length, mtimeMs: stamp });
  return turns.length;
}

/** The messages with ids from `from` to `to`, a cursor page at a time, newest page first. */
async function* pagesFrom(
  index: TranscriptIndex,
  from: number,
  to: number,
): AsyncGenerator<TranscriptMessage[]> {
  let before = to + 1;
  for (;;) {
    const page = await index.page({ limit: PAGE, beforeId: before });
    const wanted = page.messages.filter((m) => m.id >= from);
    if (wanted.length) yield wanted;
    if (!page.has_more || page.oldest_id <= from) return;
    before = page.oldest_id;
  }
}

function firstPrompt(messages: readonly TranscriptMessage[]): string | null {
  const prompt = messages.find((m) => m.kind === "prompt" && m.text.trim());
  return prompt ? prompt.text.trim().replace(/\s+/g, " ").slice(0, 120) : null;
}
