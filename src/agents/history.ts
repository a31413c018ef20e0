import { open } from "node:fs/promises";
import { join } from "node:path";
import type { TranscriptMessage } from "../transcript/cursor.ts";

/**
 * A conversation an agent CLI keeps on this host, whoever started it (the user's own history):
 * what search's opt-in import reads. Read only, never written.
 */
export interface HistoryConversation {
  path: string;
  /** The CLI's own id of the conversation (what its --resume takes). */
  conversationId: string;
  /** The folder it ran in, when its file says. */
  workDir: string | null;
  /**
   * A conversation kept in a store shared by many (OpenCode's SQLite database at `path`), not in
   * a file of its own: its messages as the transcript cursor would page them, and a stamp that
   * changes whenever the conversation does (the import reads it again only then).
   */
  stored?: { stamp: number; messages(): TranscriptMessage[] };
}

/** The bytes of a file's start in which a conversation's folder (`"cwd"`) is looked for. */
const HEAD_BYTES = 64 * 1024;

/**
 * The conversation files under `root` matching `pattern` (Bun.Glob), each named by `idOf` (null:
 * not a conversation file). A missing root is no history.
 */
export async function conversationFiles(
  root: string,
  pattern: string,
  idOf: (path: string) => string | null,
): Promise<HistoryConversation[]> {
  const found: HistoryConversation[] = [];
  const glob = new Bun.Glob(pattern);
  try {
    for await (const relative of glob.scan({ cwd: root, onlyFiles: true, followSymlinks: false })) {
      const path = join(root, relative);
      const conversationId = idOf(path);
      if (conversationId) found.push({ path, conversationId, workDir: await cwdIn(path) });
    }
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
  }
  return found;
}

/** The first `"cwd": "…"` in the file's first 64 KiB (Claude Code's lines, Codex's session_meta). */
async function cwdIn(path: string): Promise<string | null> {
  const file = await open(path, "r").catch(() => null);
  if (!file) return null;
  try {
    const buffer = new Uint8Array(HEAD_BYTES);
    const { bytesRead } = await file.read(buffer, 0, HEAD_BYTES, 0);
    const head = new TextDecoder().decode(buffer.subarray(0, bytesRead));
    const match = /"cwd"\s*:\s*("(?:[^"\\]|\\.)*")/.exec(head);
    return match ? (JSON.parse(match[1]!) as string) : null;
  } catch {
    return null;
  } finally {
    await file.close();
  }
}
