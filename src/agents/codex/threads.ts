import { open, readFile, stat } from "node:fs/promises";
import { basename, dirname, join } from "node:path";

/**
 * Codex names a conversation (a thread) itself, at its first prompt, and writes it to
 * `rollout-<local time>-<thread id>.jsonl`; ag learns the file from the hooks (every payload
 * names it) and never has to search for it.
 */

const ROLLOUT_NAME =
  /^rollout-[\dT-]+-([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\.jsonl$/;

/** The thread id of a rollout: from its name, else from its first line (session_meta). */
export async function threadIdOf(path: string): Promise<string | null> {
  const named = basename(path).match(ROLLOUT_NAME)?.[1];
  if (named) return named;
  const file = await open(path).catch(() => null);
  if (!file) return null;
  try {
    for await (const line of file.readLines()) {
      const meta = JSON.parse(line) as { type?: string; payload?: { id?: unknown } };
      return meta.type === "session_meta" && typeof meta.payload?.id === "string" ? meta.payload.id : null;
    }
    return null;
  } catch {
    return null;
  } finally {
    await file.close();
  }
}

/**
 * Whether another Codex is writing the thread now. Codex takes one writer per thread: the
 * process that runs it (a TUI, the app-server daemon, an IDE's) holds an exclusive flock on
 * `$CODEX_HOME/thread-writer-locks/<thread>.lock` (measured on 0.169.0 and 0.171.0), and a second
 * one that resumes it shows "This conversation is open in another app" instead of a composer.
 * The lock is looked up in /proc/locks, never taken (taking it, even for a moment, could turn
 * away the Codex that owns it). The Codex home is the one the rollout lives in
 * (`<home>/sessions/YYYY/MM/DD/rollout-….jsonl`). Null: unknown (no /proc, no lock file).
 */
export async function isThreadOpen(rolloutPath: string, thread: string): Promise<boolean | null> {
  const sessions = dirname(dirname(dirname(dirname(rolloutPath))));
  if (basename(sessions) !== "sessions") return null;
  const lock = await stat(join(dirname(sessions), "thread-writer-locks", `${thread}.lock`), {
    bigint: true,
  }).catch(() => null);
  if (!lock) return false;
  const locks = await readFile("/proc/locks", "utf8").catch(() => null);
  if (locks === null) return null;
  return locks.split("\n").some((line) => heldOn(line, lock.dev, lock.ino));
}

/** "13: FLOCK  ADVISORY  WRITE 28176 fe:00:2246613 0 EOF": an exclusive flock on that inode. */
function heldOn(line: string, dev: bigint, ino: bigint): boolean {
  const m = line.match(/^\d+: FLOCK\s+\S+\s+WRITE\s+\d+\s+([0-9a-f]+):([0-9a-f]+):(\d+)\s/);
  if (!m) return false;
  // Linux's dev_t: the major number in bits 8–19 and 32+, the minor in bits 0–7 and 12–31.
  const major = ((dev >> 8n) & 0xfffn) | ((dev >> 32n) & ~0xfffn);
  const minor = (dev & 0xffn) | ((dev >> 12n) & ~0xffn);
  return BigInt(`0x${m[1]}`) === major && BigInt(`0x${m[2]}`) === minor && BigInt(m[3]!) === ino;
}
