import { readdir, realpath, stat } from "node:fs/promises";
import { join } from "node:path";
import { AgError } from "../../shared/errors.ts";

// ── Where Claude Code writes a session's transcript ─────────────────────────────────────────────

/** Claude Code caps the project folder name here and appends a hash of the full path. */
const MAX_PROJECT_DIR = 200;

/**
 * The project folder name Claude Code derives from its launch cwd: every non-alphanumeric UTF-16
 * unit becomes "-"; past 200 characters, the first 200 + "-" + base-36 of |Java-style hashCode| of
 * the ORIGINAL path (read from the 2.1.197 binary: `(h << 5) - h + charCodeAt(i) | 0`).
 */
export function encodeProjectDir(cwd: string): string {
  const encoded = cwd.replace(/[^a-zA-Z0-9]/g, "-");
  if (encoded.length <= MAX_PROJECT_DIR) return encoded;
  let hash = 0;
  for (let i = 0; i < cwd.length; i++) hash = ((hash << 5) - hash + cwd.charCodeAt(i)) | 0;
  return `${encoded.slice(0, MAX_PROJECT_DIR)}-${Math.abs(hash).toString(36)}`;
}

/** `<dataDir>/projects/<encoded cwd>/<sessionId>.jsonl` (dataDir = ~/.claude or CLAUDE_CONFIG_DIR). */
export function transcriptPath(dataDir: string, workDir: string, sessionId: string): string {
  return join(dataDir, "projects", encodeProjectDir(workDir), `${checkSessionId(sessionId)}.jsonl`);
}

/**
 * The transcript of `sessionId`, or null. Tries the computed path (the real path first: Claude Code
 * sees the cwd with symlinks resolved), then scans `projects/*`: 2.1.224 changed the rule for
 * paths over 200 characters, so only the scan is exact across releases. Several hits: newest wins.
 */
export async function findTranscript(
  dataDir: string,
  sessionId: string,
  workDir?: string,
): Promise<string | null> {
  const fileName = `${checkSessionId(sessionId)}.jsonl`;
  if (workDir) {
    const real = await realpath(workDir).catch(() => workDir);
    for (const dir of new Set([real, workDir])) {
      const path = transcriptPath(dataDir, dir, sessionId);
      if (await stat(path).catch(() => null)) return path;
    }
  }
  const projects = join(dataDir, "projects");
  const dirs = await readdir(projects, { withFileTypes: true }).catch(() => []);
  let best: { path: string; mtime: number } | null = null;
  for (const dir of dirs) {
    if (!dir.isDirectory()) continue;
    const path = join(projects, dir.name, fileName);
    const info = await stat(path).catch(() => null);
    if (info && (!best || info.mtimeMs > best.mtime)) best = { path, mtime: info.mtimeMs };
  }
  return best?.path ?? null;
}

function checkSessionId(sessionId: string): string {
  if (!/^[A-Za-z0-9_-]+$/.test(sessionId)) throw new AgError("VALIDATION_ERROR", "invalid agent session id");
  return sessionId;
}
