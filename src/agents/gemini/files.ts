import { closeSync, linkSync, openSync, readFileSync, readSync, unlinkSync, writeFileSync } from "node:fs";
import { readdir } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import { AgError } from "../../shared/errors.ts";

/**
 * Where the Gemini CLI writes a session: `<.gemini>/tmp/<project>/chats/session-<YYYY-MM-DDTHH-MM>-
 * <first 8 of the id>.jsonl`, the project a short name the CLI keeps in projects.json (the folder's
 * name, made unique). The name holds only 8 characters of the id: a file is the session's when its
 * first line (the header) names the whole id. `--resume` also leaves a header-only file of the same
 * id behind (SessionStart names it); the conversation is in the oldest of them. Within the
 * conversation's first minute that is the conversation's own file, to which it appends a header,
 * harmlessly: it read the conversation first, and writes the whole history again (docs/agents.md).
 */

/** The session file of `sessionId` under the user's .gemini folder, or null. */
export async function findTranscript(geminiDir: string, sessionId: string): Promise<string | null> {
  const id8 = `-${checkSessionId(sessionId).slice(0, 8)}.jsonl`;
  const tmp = join(geminiDir, "tmp");
  const projects = await readdir(tmp, { withFileTypes: true }).catch(() => []);
  let best: { path: string; started: string } | null = null;
  for (const project of projects) {
    if (!project.isDirectory() && !project.isSymbolicLink()) continue;
    const chats = join(tmp, project.name, "chats");
    for (const name of await readdir(chats).catch(() => [] as string[])) {
      if (!name.startsWith("session-") || !name.endsWith(id8)) continue;
      const header = headerOf(join(chats, name));
      if (header?.sessionId !== sessionId) continue;
      const started = header.startTime ?? "";
      if (!best || started < best.started) best = { path: join(chats, name), started };
    }
  }
  return best?.path ?? null;
}

/** The conversation a session file records (its header's id), or null for another file. */
export function conversationIdOf(path: string): string | null {
  return headerOf(path)?.sessionId ?? null;
}

/**
 * The UTC minute (epoch ms) a session file is named after (`session-<YYYY-MM-DDTHH-MM>-…`), or
 * null for a name of another form.
 */
export function namedMinute(path: string): number | null {
  const named = /^session-(\d{4}-\d\d-\d\dT\d\d)-(\d\d)-/.exec(basename(path));
  const at = named ? Date.parse(`${named[1]}:${named[2]}:00Z`) : Number.NaN;
  return Number.isNaN(at) ? null : at;
}

/**
 * A session file named after the UTC minute `now` is in (or a later one), named after the minute
 * before the one it names instead: a recording the CLI starts for its id this minute is then a
 * file of its own (acp.ts). Only the name changes (the CLI and findTranscript go by the header's
 * id and start). Answers whether the file now has a name of an earlier minute; false when the name
 * it needs is taken (never written over) or the file could not be renamed.
 */
export function nameBeforeMinute(path: string, now: number): boolean {
  const minute = namedMinute(path);
  if (minute === null) return false;
  if (minute + 60_000 <= now) return true;
  const stamp = new Date(minute - 60_000).toISOString().slice(0, 16).replaceAll(":", "-");
  const rest = basename(path).replace(/^session-[\dT-]{16}-/, "");
  try {
    // A link, then the old name gone: a rename that cannot replace a file of that name.
    linkSync(path, join(dirname(path), `session-${stamp}-${rest}`));
    unlinkSync(path);
    return true;
  } catch {
    return false;
  }
}

/** The first line of a session file, read. */
function headerOf(path: string): { sessionId?: string; startTime?: string } | null {
  const fd = openSync(path, "r");
  try {
    const buffer = Buffer.alloc(4096);
    const bytes = readSync(fd, buffer, 0, buffer.length, 0);
    const line = buffer.subarray(0, bytes).toString("utf8").split("\n")[0]!;
    return JSON.parse(line);
  } catch {
    return null;
  } finally {
    closeSync(fd);
  }
}

/**
 * A fork: the parent's session file copied, beside it, into a session of `sessionId` that
 * `gemini --resume <sessionId>` then continues (the CLI's own fork, --session-file, picks a
 * random id ag could not give). The copy's header names the new id and now as its start; the
 * CLI folds metadata in order, so a last `$set` overrides any id the parent's lines set.
 */
export function forkTranscript(parentFile: string, sessionId: string, now: Date): string {
  const stamp = now.toISOString().slice(0, 16).replaceAll(":", "-");
  const path = join(dirname(parentFile), `session-${stamp}-${checkSessionId(sessionId).slice(0, 8)}.jsonl`);
  if (basename(path) === basename(parentFile)) throw new AgError("CONFLICT", "a fork needs an id of its own");
  const text = readFileSync(parentFile, "utf8");
  const newline = text.indexOf("\n");
  const header = (headerOf(parentFile) ?? {}) as Record<string, unknown>;
  const iso = now.toISOString();
  const lines = [
    JSON.stringify({ ...header, sessionId, startTime: iso, lastUpdated: iso }),
    newline < 0 ? "" : text.slice(newline + 1).replace(/\n?$/, ""),
    JSON.stringify({ $set: { sessionId } }),
  ];
  writeFileSync(path, `${lines.filter(Boolean).join("\n")}\n`, { flag: "wx" });
  return path;
}

function checkSessionId(sessionId: string): string {
  if (!/^[A-Za-z0-9_-]{8,}$/.test(sessionId))
    throw new AgError("VALIDATION_ERROR", "invalid agent session id");
  return sessionId;
}
