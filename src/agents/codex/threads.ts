import { open } from "node:fs/promises";
import { basename } from "node:path";

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
