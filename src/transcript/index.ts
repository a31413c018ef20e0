import type { FileHandle } from "node:fs/promises";
import { AgError } from "../shared/errors.ts";
import {
  type CursorQuery,
  checkCursorQuery,
  type LineEntry,
  lineReaderOf,
  type MessageRole,
  type TranscriptCursorPage,
  type TranscriptFormat,
} from "./cursor.ts";
import { openTranscript, type TailRead } from "./tail.ts";

export interface ScanResult {
  bytes: number;
  entries: number;
  ms: number;
}

export interface TranscriptIndex {
  /** Message entries indexed so far. */
  readonly count: number;
  /** Offset just past the last line accounted for: start a tail here to feed `ingest`. */
  readonly end: number;
  /** Bytes held by the index's arrays (capacity, not just what is used). */
  readonly memoryBytes: number;
  /** Indexes from `end` to the end of the file in large chunks (the first call is the full build). */
  scan(): Promise<ScanResult>;
  /**
   * Adds what a tail started at `end` read (lines already indexed are skipped); a truncated read
   * resets the index first, so ids then count from the new file's start.
   */
  ingest(read: Pick<TailRead, "lines" | "truncated">): void;
  /** Forgets everything (the file was truncated or replaced). */
  reset(): void;
  page(query: CursorQuery): Promise<TranscriptCursorPage>;
}

const ROLE_CODES: Record<MessageRole, number> = { user: 1, assistant: 2, system: 3 };
const ROLE_NAMES = [undefined, "user", "assistant", "system"] as const;
const decoder = new TextDecoder();

/**
 * The ordinal → byte-offset index behind cursor pages. Entry n (1-based) is the n-th message entry
 * of the file; its offset, length and role live in typed arrays that double as they fill (17 bytes
 * an entry with the per-role id lists), so a page costs a binary search plus reading exactly its
 * own entries' bytes — never a scan. In a format that rewrites entries (TranscriptFormat.entries),
 * an entry written again keeps its id and points at its newest line (plus a key per entry).
 */
export function createTranscriptIndex(
  path: string,
  format: TranscriptFormat,
  /** `owner`: the uid that must own the file (tail.ts openTranscript). */
  options: { chunkBytes?: number; owner?: number } = {},
): TranscriptIndex {
  const chunkBytes = options.chunkBytes ?? 8 * 1024 * 1024;
  let offsets = new Float64Array(1024); // Float64: exact past 4 GiB
  let lengths = new Uint32Array(1024);
  let roles = new Uint8Array(1024);
  let count = 0;
  let end = 0;
  let inode: number | null = null;
  let generation = 0; // bumps on reset, so a page read across a reset is retried
  const roleIds = [new Uint32Array(0), new Uint32Array(256), new Uint32Array(1024), new Uint32Array(256)];
  const roleCounts = [0, 0, 0, 0];
  let scanning: Promise<ScanResult> | null = null;
  // Formats that rewrite entries: what each line is depends on the lines before it.
  let readLine = lineReaderOf(format);
  const byKey = new Map<string, number>();

  function add(offset: number, length: number, line: Uint8Array) {
    if (offset < end) return;
    end = offset + length + 1;
    const entry = readLine(line);
    if (!entry) return;
    if (entry.key !== undefined && rewrite(entry, offset, length)) return;
    if (count === offsets.length) {
      offsets = grow(offsets);
      lengths = grow(lengths);
      roles = grow(roles);
    }
    const code = ROLE_CODES[entry.role];
    offsets[count] = offset;
    lengths[count] = length;
    roles[count] = code;
    count++;
    if (roleCounts[code] === roleIds[code]!.length) roleIds[code] = grow(roleIds[code]!);
    roleIds[code]![roleCounts[code]!++] = count;
    if (entry.key !== undefined) byKey.set(entry.key, count);
  }

  /** The entry `key` names, written again: its id and role stay, its bytes are the newer line's. */
  function rewrite(entry: LineEntry, offset: number, length: number): boolean {
    const id = byKey.get(entry.key!);
    if (id === undefined) return false;
    offsets[id - 1] = offset;
    lengths[id - 1] = length;
    return true;
  }

  function reset() {
    count = 0;
    end = 0;
    inode = null;
    roleCounts.fill(0);
    readLine = lineReaderOf(format);
    byKey.clear();
    generation++;
  }

  async function scanToEnd(): Promise<ScanResult> {
    const started = performance.now();
    const file = await openTranscript(path, options.owner);
    if (!file) return { bytes: 0, entries: 0, ms: 0 };
    try {
      return await scanFrom(file, started);
    } finally {
      await file.close();
    }
  }

  async function scanFrom(file: FileHandle, started: number): Promise<ScanResult> {
    const info = await file.stat();
    if (info.size < end || (inode !== null && info.ino !== inode)) reset();
    inode = info.ino;
    if (info.size === end) return { bytes: 0, entries: 0, ms: performance.now() - started };
    const from = end;
    const before = count;
    let buffer: Uint8Array = new Uint8Array(chunkBytes);
    let filled = 0; // bytes of a partial line carried over at the start of `buffer`
    let position = end;
    for (;;) {
      if (filled === buffer.length) buffer = growBytes(buffer, filled); // one line longer than a chunk
      const { bytesRead } = await file.read(buffer, filled, buffer.length - filled, position);
      if (bytesRead === 0) break;
      position += bytesRead;
      const used = indexChunk(buffer, filled + bytesRead, position - filled - bytesRead);
      buffer.copyWithin(0, used, filled + bytesRead);
      filled = filled + bytesRead - used;
    }
    return { bytes: end - from, entries: count - before, ms: performance.now() - started };
  }

  /** Indexes the complete lines of buffer[0, size) (file offset `base`); returns the bytes used. */
  function indexChunk(buffer: Uint8Array, size: number, base: number): number {
    let start = 0;
    for (let nl = buffer.indexOf(0x0a, start); nl >= 0 && nl < size; nl = buffer.indexOf(0x0a, start)) {
      if (nl > start) add(base + start, nl - start, buffer.subarray(start, nl));
      start = nl + 1;
    }
    return start;
  }

  function scan(): Promise<ScanResult> {
    // One scan at a time; a caller arriving meanwhile waits for it and then scans what is left.
    const run = (scanning ?? Promise.resolve()).catch(() => undefined).then(scanToEnd);
    scanning = run;
    return run.finally(() => {
      if (scanning === run) scanning = null;
    });
  }

  async function page(query: CursorQuery, retried = false): Promise<TranscriptCursorPage> {
    checkCursorQuery(query);
    await scan(); // catch up with lines written since: at most a stat when nothing is new
    const ids = selectIds(query);
    if (ids.length === 0) return { messages: [], has_more: false, oldest_id: 0, newest_id: 0 };
    const seen = generation;
    const texts = await readEntries(ids);
    if (seen !== generation || texts === null) {
      if (retried) throw new AgError("CONFLICT", "the transcript changed while it was read; try again");
      reset();
      return page(query, true);
    }
    const messages = ids.map((id, i) => format.toMessage(id, texts[i]!, ROLE_NAMES[roles[id - 1]!]!));
    return { messages, has_more: hasOlder(query, ids[0]!), oldest_id: ids[0]!, newest_id: ids.at(-1)! };
  }

  /** Ids of the page, oldest first: the `limit` newest matching entries below `beforeId`. */
  function selectIds({ beforeId, limit, role }: CursorQuery): number[] {
    const below = Math.min(beforeId ?? Number.POSITIVE_INFINITY, count + 1);
    if (!role) {
      const first = Math.max(1, below - limit);
      return Array.from({ length: Math.max(0, below - first) }, (_, i) => first + i);
    }
    const code = ROLE_CODES[role];
    const list = roleIds[code]!;
    const hi = lowerBound(list, roleCounts[code]!, below);
    return Array.from(list.subarray(Math.max(0, hi - limit), hi));
  }

  function hasOlder({ role }: CursorQuery, oldest: number): boolean {
    if (!role) return oldest > 1;
    const code = ROLE_CODES[role];
    return roleCounts[code]! > 0 && roleIds[code]![0]! < oldest;
  }

  /** The text of each entry, reading nearby entries in one go; null when the file no longer fits. */
  async function readEntries(ids: number[]): Promise<string[] | null> {
    const runs = groupRuns(ids.map((id) => [offsets[id - 1]!, lengths[id - 1]!] as const));
    const file = await openTranscript(path, options.owner);
    if (!file) return null;
    const chunks: Uint8Array[] = [];
    try {
      for (const run of runs) {
        const bytes = new Uint8Array(run.to - run.from);
        const { bytesRead } = await file.read(bytes, 0, bytes.length, run.from);
        chunks.push(bytes.subarray(0, bytesRead));
      }
    } finally {
      await file.close();
    }
    const texts: string[] = [];
    for (const [r, run] of runs.entries()) {
      const bytes = chunks[r]!;
      if (bytes.length < run.to - run.from) return null;
      for (const [at, length] of run.entries) {
        const start = at - run.from;
        if (bytes[start] !== 0x7b) return null; // every entry is a JSON object: anything else = rewritten
        texts.push(decoder.decode(bytes.subarray(start, start + length)));
      }
    }
    return texts;
  }

  return {
    get count() {
      return count;
    },
    get end() {
      return end;
    },
    get memoryBytes() {
      return [offsets, lengths, roles, ...roleIds].reduce((sum, array) => sum + array.byteLength, 0);
    },
    scan,
    ingest({ lines, truncated }) {
      if (truncated) reset();
      for (const line of lines) add(line.offset, line.length, line.bytes);
    },
    reset,
    page,
  };
}

const RUN_GAP = 64 * 1024;
const RUN_MAX = 4 * 1024 * 1024;

interface Run {
  from: number;
  to: number;
  entries: (readonly [number, number])[];
}

/**
 * Entries close together are read as one range: a page of 50 is usually one or two reads. A
 * rewritten entry lies after the entries that follow it in id order: a range never shrinks.
 */
function groupRuns(entries: (readonly [number, number])[]): Run[] {
  const runs: Run[] = [];
  for (const entry of entries) {
    const [at, length] = entry;
    const last = runs.at(-1);
    const to = Math.max(last?.to ?? 0, at + length);
    if (last && at >= last.from && at - last.to <= RUN_GAP && to - last.from <= RUN_MAX) {
      last.to = to;
      last.entries.push(entry);
    } else runs.push({ from: at, to: at + length, entries: [entry] });
  }
  return runs;
}

/** First index in list[0, size) whose value is >= value. */
function lowerBound(list: Uint32Array, size: number, value: number): number {
  let lo = 0;
  let hi = size;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (list[mid]! < value) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

function grow<T extends Float64Array | Uint32Array | Uint8Array>(array: T): T {
  const next = new (array.constructor as new (n: number) => T)(Math.max(16, array.length * 2));
  next.set(array);
  return next;
}

function growBytes(buffer: Uint8Array, keep: number): Uint8Array {
  const next = new Uint8Array(buffer.length * 2);
  next.set(buffer.subarray(0, keep));
  return next;
}
