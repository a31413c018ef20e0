import { readFileSync, statSync } from "node:fs";
import { isAbsolute, join, relative } from "node:path";
import { EMPTY_TREE, git as gitIn, headCommit, isWorkTree } from "../shared/git.ts";
import { closedTo, permits, type RunAs } from "../shared/run-as.ts";
import type { ReviewedChange } from "./consensus.ts";

/** What the reviewers are given of the change: at most this much (they can read the files for more). */
export const MAX_CHANGE_CHARS = 60_000;
/** New files shown in full, at most this many (the rest are named). */
const MAX_NEW_FILES = 40;
/** One file of a session outside git is shown up to this much. */
const MAX_FILE_CHARS = 16_000;

export interface CollectedChange {
  change: ReviewedChange;
  /** How the brief introduces it. */
  description: string;
  text: string;
}

/**
 * The work of a session, as reviewers read it. In a git repository: the diff of the work tree
 * against the commit the session started from (its commits and what it left uncommitted), new
 * files in full. Elsewhere: the files its transcript says it wrote, as they are now. With `runAs`
 * (the session's tenant's OS user), only what that user can read: git runs as it, and a file it
 * could not read (a link its agent made to another user's file) is named, not shown.
 */
export async function collectChange(
  session: { workDir: string; baseCommit: string | null; filesTouched: readonly string[] },
  runAs: RunAs | null = null,
): Promise<CollectedChange> {
  if (await isWorkTree(session.workDir, runAs)) return gitChange(session.workDir, session.baseCommit, runAs);
  return filesChange(session.workDir, session.filesTouched, runAs);
}

async function gitChange(
  dir: string,
  startedAt: string | null,
  runAs: RunAs | null,
): Promise<CollectedChange> {
  const git = (args: string[]) => gitIn(dir, args, runAs);
  const head = startedAt ? null : await headCommit(dir, runAs);
  const base = startedAt ?? head ?? EMPTY_TREE;
  const described = startedAt
    ? `a git diff of the work tree against ${startedAt.slice(0, 12)}, the commit the session started from`
    : head
      ? "a git diff of the work tree against HEAD (the session's start commit is unknown: only what is not committed)"
      : "every file of the repository (it has no commits yet)";
  const diff = await git(["diff", "--no-color", "--no-ext-diff", "--find-renames", base, "--"]);
  const names = await git(["diff", "--name-only", "--find-renames", base, "--"]);
  const untracked = await git(["ls-files", "--others", "--exclude-standard", "-z"]);
  const changed = lines(names?.stdout ?? "");
  const added = (untracked?.stdout ?? "").split("\0").filter(Boolean);
  let text = diff?.stdout ?? "";
  for (const file of added.slice(0, MAX_NEW_FILES)) {
    // Exit code 1: the files differ, which is the point.
    const shown = await git(["diff", "--no-color", "--no-index", "--", "/dev/null", file]);
    text += shown?.stdout ?? "";
  }
  if (added.length > MAX_NEW_FILES)
    text += `\n[${added.length - MAX_NEW_FILES} more new files: ${added.slice(MAX_NEW_FILES).join(", ")}]\n`;
  return finish("git", startedAt ?? head, [...changed, ...added], text, described);
}

/** The files the session's transcript says it wrote, as they are now (outside a git repository). */
export function filesChange(
  workDir: string,
  touched: readonly string[],
  runAs: RunAs | null,
): CollectedChange {
  if (touched.length === 0) {
    return finish("none", null, [], "", "no files: the session's transcript records no file written");
  }
  const parts = touched.map((file) => {
    const path = isAbsolute(file) ? file : join(workDir, file);
    const shown = relative(workDir, path).startsWith("..") ? path : relative(workDir, path);
    try {
      const stat = statSync(path);
      if (!stat.isFile()) return `=== ${shown} (not a file now)\n`;
      if (runAs && (closedTo(runAs, path) || !permits(runAs, stat, 0o4)))
        return `=== ${shown} (not readable by the session's user ${runAs.name})\n`;
      const content = readFileSync(path, "utf8");
      const cut = content.length > MAX_FILE_CHARS;
      return `=== ${shown}\n${cut ? `${content.slice(0, MAX_FILE_CHARS)}\n[… cut]` : content}\n`;
    } catch {
      return `=== ${shown} (gone: deleted or moved since)\n`;
    }
  });
  return finish(
    "files",
    null,
    [...touched],
    parts.join("\n"),
    "the files the session wrote (its folder is not a git repository), as they are now",
  );
}

function finish(
  kind: ReviewedChange["kind"],
  base: string | null,
  files: string[],
  raw: string,
  description: string,
): CollectedChange {
  let text = typeable(raw);
  const truncated = text.length > MAX_CHANGE_CHARS;
  if (truncated) {
    const cut = text.lastIndexOf("\n", MAX_CHANGE_CHARS);
    const rest = text.length - (cut > 0 ? cut : MAX_CHANGE_CHARS);
    text = `${text.slice(0, cut > 0 ? cut : MAX_CHANGE_CHARS)}\n[… ${rest} more characters cut: read the files themselves]`;
  }
  return {
    change: { kind, base, files: [...new Set(files)], bytes: Buffer.byteLength(text), truncated },
    description,
    text,
  };
}

/** What can be typed into the agent: line ends as newlines, other control characters shown as �. */
export function typeable(text: string): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: replacing control characters is the point
  return text.replace(/\r\n?/g, "\n").replace(/[\u0000-\u0008\u000b-\u001f\u007f]/g, "\ufffd");
}

function lines(text: string): string[] {
  return text.split("\n").filter((line) => line.trim() !== "");
}
