import { existsSync, type FSWatcher, watch } from "node:fs";
import { type FileHandle, open } from "node:fs/promises";
import { basename, dirname } from "node:path";
import { AgError } from "../shared/errors.ts";

/** One complete line of the file: where it starts, its bytes (without the newline) and their text. */
export interface TailLine {
  /** Byte offset of the line's first byte. */
  offset: number;
  /** Byte length, without the "\n". */
  length: number;
  text: string;
  /** The raw bytes: a view into the chunk read (never reused), so it stays valid. */
  bytes: Uint8Array;
}

export interface TailRead {
  lines: TailLine[];
  /** The file shrank or was replaced: reading restarted at byte 0 and `lines` come from the new file. */
  truncated: boolean;
  /** More bytes were already there than one read takes (`maxBytes`): read again. */
  more: boolean;
}

export interface TranscriptTail {
  /** Complete lines added since the last read. A partial last line waits for its newline. */
  read(): Promise<TailRead>;
  /** Offset of the first byte not yet returned as part of a line (a partial line starts here). */
  readonly offset: number;
}

const NEWLINE = 0x0a;
const decoder = new TextDecoder();

/**
 * A byte-offset tailer over a file another process appends to (the agent's JSONL transcript).
 * It works in bytes and decodes only complete lines, so a multi-byte character split across two
 * reads is never mangled. A missing file reads as empty: it may appear later.
 */
export function createTranscriptTail(
  path: string,
  options: { startOffset?: number; maxBytes?: number; owner?: number } = {},
): TranscriptTail {
  const maxBytes = options.maxBytes ?? 8 * 1024 * 1024;
  let offset = options.startOffset ?? 0; // start of the pending bytes = first unreturned line
  let pending: Uint8Array = new Uint8Array(0);
  let inode: number | null = null;
  let chain: Promise<unknown> = Promise.resolve();

  async function readOnce(): Promise<TailRead> {
    const file = await openTranscript(path, options.owner);
    if (!file) return { lines: [], truncated: false, more: false };
    try {
      return await readFrom(file);
    } finally {
      await file.close();
    }
  }

  async function readFrom(file: FileHandle): Promise<TailRead> {
    const info = await file.stat();
    let truncated = false;
    // A shorter file, or another file under the same name (rewritten via rename), starts over.
    // (A rewrite in place that is already longer than what was read cannot be told from appends.)
    if (info.size < offset + pending.length || (inode !== null && info.ino !== inode)) {
      offset = 0;
      pending = new Uint8Array(0);
      truncated = true;
    }
    inode = info.ino;
    const from = offset + pending.length;
    const to = Math.min(info.size, from + maxBytes);
    if (to <= from) return { lines: [], truncated, more: false };
    // Read through the handle that was checked: a name swapped meanwhile changes nothing.
    const fresh = new Uint8Array(to - from);
    const { bytesRead } = await file.read(fresh, 0, fresh.length, from);
    if (bytesRead < fresh.length) return { lines: [], truncated, more: true };
    const bytes = pending.length > 0 ? concat(pending, fresh) : fresh;
    const { lines, consumed } = splitLines(bytes, offset);
    pending = bytes.slice(consumed);
    offset += consumed;
    return { lines, truncated, more: from + fresh.length < info.size };
  }

  return {
    read() {
      // Serialised: a watch event may ask for a read while the previous one is still running.
      const next = chain.then(readOnce, readOnce);
      chain = next.catch(() => undefined);
      return next;
    },
    get offset() {
      return offset;
    },
  };
}

/**
 * Opens a transcript to read, or null when it is not there (yet). With `owner` (the uid that runs
 * the session's agent: a tenant's runAs user), a file that uid does not own is refused: ag runs as
 * root then, and the agent controls the file's name — a link to, or a hook naming, another
 * tenant's transcript must not make ag read it. The owner is checked on the open handle itself,
 * so swapping the name after the check reaches nothing.
 */
export async function openTranscript(path: string, owner?: number): Promise<FileHandle | null> {
  const file = await open(path, "r").catch(() => null);
  if (!file || owner === undefined) return file;
  const info = await file.stat();
  if (info.uid === owner && info.isFile()) return file;
  await file.close();
  throw new AgError(
    "FORBIDDEN",
    `transcript ${path} is owned by uid ${info.uid}, not by uid ${owner} that runs the session's agent: not read`,
  );
}

/** Complete lines of `bytes` (which starts at file offset `base`); empty lines are skipped. */
function splitLines(bytes: Uint8Array, base: number): { lines: TailLine[]; consumed: number } {
  const lines: TailLine[] = [];
  let start = 0;
  for (let nl = bytes.indexOf(NEWLINE); nl >= 0; nl = bytes.indexOf(NEWLINE, start)) {
    if (nl > start) {
      const view = bytes.subarray(start, nl);
      lines.push({ offset: base + start, length: nl - start, text: decoder.decode(view), bytes: view });
    }
    start = nl + 1;
  }
  return { lines, consumed: start };
}

function concat(a: Uint8Array, b: Uint8Array): Uint8Array {
  const out = new Uint8Array(a.length + b.length);
  out.set(a, 0);
  out.set(b, a.length);
  return out;
}

/**
 * Calls `onChange` (debounced) when the file may have changed. It watches the file's DIRECTORY,
 * because the file — and even its directory: Claude Code creates the project folder with the
 * first line — may not exist yet; until then it watches the nearest existing ancestor and moves
 * down as folders appear. Event-driven: no polling. Returns a stop function.
 */
export function watchTranscript(
  path: string,
  onChange: () => void,
  options: { debounceMs?: number; watch?: typeof watch } = {},
): () => void {
  const debounceMs = options.debounceMs ?? 10;
  const watchFolder = options.watch ?? watch;
  const target = dirname(path);
  const name = basename(path);
  let watcher: FSWatcher | null = null;
  let watched = "";
  let timer: ReturnType<typeof setTimeout> | null = null;
  let stopped = false;

  const fire = () => {
    if (timer || stopped) return;
    timer = setTimeout(() => {
      timer = null;
      if (!stopped) onChange();
    }, debounceMs);
  };

  function attach(initial = false): boolean {
    watcher?.close();
    watcher = null;
    if (stopped) return true;
    watched = nearestExisting(target);
    try {
      watcher = watchFolder(watched, { persistent: false }, onEvent);
    } catch {
      return false;
    }
    // The watched folder itself can vanish: start again from whatever exists then.
    watcher.on("error", () => setTimeout(attach, 0));
    // A folder below may have appeared between looking and watching: its creation was an event
    // nobody heard, so move down now (the agent creates the whole chain and the file at once).
    if (watched !== target && nearestExisting(target) !== watched) return attach();
    // Moving down to a folder that just appeared: the file may have been written meanwhile.
    if (!initial && watched === target && existsSync(path)) fire();
    return true;
  }

  function onEvent(_event: string, filename: string | Buffer | null) {
    if (watched !== target || !existsSync(watched)) {
      if (nearestExisting(target) !== watched) attach();
      if (watched !== target) return;
    }
    if (filename === null || filename.toString() === name) fire();
  }

  if (!attach(true)) throw new AgError("INTERNAL_ERROR", `cannot watch ${watched} for ${path}`);
  return function stop() {
    stopped = true;
    watcher?.close();
    if (timer) clearTimeout(timer);
  };
}

/** `dir` if it exists, else its closest existing ancestor. */
function nearestExisting(dir: string): string {
  let current = dir;
  while (!existsSync(current)) {
    const parent = dirname(current);
    if (parent === current) break;
    current = parent;
  }
  return current;
}
