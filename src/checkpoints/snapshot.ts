import { lstatSync } from "node:fs";
import { join } from "node:path";
import { AgError } from "../shared/errors.ts";
import type { GitResult } from "../shared/git.ts";
import type { Place } from "./place.ts";

/**
 * git plumbing on a place: a snapshot of the folder into the session's own index and a commit
 * under refs/ag/checkpoints/, diffs between two of them. Porcelain that would touch HEAD, a
 * branch or the user's index (commit, stash, checkout) is never used.
 */

/** The namespace of every checkpoint ref; a session's line is `<ROOT>/<session>/<name>`. */
export const REF_ROOT = "refs/ag/checkpoints";

/** A file a turn changed: its path in the folder, how, and its lines (null: binary). */
export interface ChangedFile {
  path: string;
  status: "added" | "modified" | "deleted";
  added: number | null;
  removed: number | null;
}

/** Runs a git command that must succeed: its stdout. */
export async function must(place: Place, args: string[], stdin?: string): Promise<string> {
  const result: GitResult | null = await place.git(args, stdin);
  if (result?.code !== 0) {
    const said = result ? result.stderr.trim() || `exit ${result.code}` : "no answer";
    throw new AgError("CHECKPOINT_UNAVAILABLE", `git ${args[0]} in ${place.folder} failed: ${said}`);
  }
  return result.stdout;
}

/**
 * The folder as a pathspec from the work tree's top (literal: a name is never a pattern); an
 * empty path is the whole tree ("." is not, with `literal`).
 */
export function folderSpec(place: Place): string {
  return `:(top,literal)${place.prefix.replace(/\/$/, "")}`;
}

/**
 * The files git would take in that are over `maxFileBytes`: new or changed ones the session's
 * index does not hold as they are. They are left out of the snapshot (and so never removed by a
 * rewind either).
 */
async function oversized(place: Place, maxFileBytes: number): Promise<string[]> {
  const listed = await must(place, [
    "ls-files",
    "-z",
    "--others",
    "--modified",
    "--exclude-standard",
    "--full-name",
    "--",
    folderSpec(place),
  ]);
  const big: string[] = [];
  for (const path of new Set(listed.split("\0").filter(Boolean))) {
    try {
      const stat = lstatSync(join(place.workTree, path));
      if (stat.isFile() && stat.size > maxFileBytes) big.push(path);
    } catch {
      // Gone since it was listed (a deleted file is listed as modified): nothing to bound.
    }
  }
  return big;
}

/**
 * Takes the folder into the session's index (ignored files out, files over `maxFileBytes` out)
 * and writes its tree: the tree's id.
 */
export async function writeTree(place: Place, maxFileBytes: number): Promise<string> {
  const big = await oversized(place, maxFileBytes);
  const specs = [folderSpec(place), ...big.map((path) => `:(top,literal,exclude)${path}`)];
  // Pathspecs on stdin: a file name never becomes an argument, nor too long a command line.
  await must(
    place,
    ["add", "-A", "--ignore-errors", "--pathspec-from-file=-", "--pathspec-file-nul"],
    `${specs.join("\0")}\0`,
  );
  // A large file the index held from before it grew: out of this snapshot too.
  if (big.length > 0)
    await must(
      place,
      ["rm", "-q", "--cached", "--ignore-unmatch", "--pathspec-from-file=-", "--pathspec-file-nul"],
      `${big.map((path) => `:(top,literal)${path}`).join("\0")}\0`,
    );
  return (await must(place, ["write-tree"])).trim();
}

/** The tree a commit records. */
export async function treeOf(place: Place, commit: string): Promise<string> {
  return (await must(place, ["rev-parse", `${commit}^{tree}`])).trim();
}

/**
 * A commit of `tree` on top of `parent`, named by `ref`; when `parent` already records that
 * tree, nothing is written and `parent` is the answer (an unchanged folder costs no commit).
 */
export async function commitTree(
  place: Place,
  tree: string,
  parent: string | null,
  message: string,
): Promise<string> {
  if (parent && (await treeOf(place, parent)) === tree) return parent;
  const args = ["commit-tree", tree, ...(parent ? ["-p", parent] : []), "-m", message];
  return (await must(place, args)).trim();
}

export async function setRef(place: Place, ref: string, commit: string): Promise<void> {
  await must(place, ["update-ref", ref, commit]);
}

/** Removes refs (a session's checkpoints pruned or removed); a missing one is no error. */
export async function deleteRefs(place: Place, refs: readonly string[]): Promise<void> {
  if (refs.length === 0) return;
  await must(place, ["update-ref", "--stdin", "-z"], refs.map((ref) => `delete ${ref}\0\0`).join(""));
}

/** The refs of a session's line. */
export async function refsOf(place: Place, sessionId: string): Promise<string[]> {
  const out = await must(place, ["for-each-ref", "--format=%(refname)", `${REF_ROOT}/${sessionId}/`]);
  return out.split("\n").filter(Boolean);
}

/** What changed from `from` to `to` in the folder, file by file, with lines added and removed. */
export async function changedFiles(place: Place, from: string, to: string): Promise<ChangedFile[]> {
  if (from === to) return [];
  const spec = ["--", folderSpec(place)];
  const [numstat, status] = await Promise.all([
    must(place, ["diff-tree", "-r", "-z", "--no-renames", "--numstat", from, to, ...spec]),
    must(place, ["diff-tree", "-r", "-z", "--no-renames", "--name-status", from, to, ...spec]),
  ]);
  const how = new Map<string, ChangedFile["status"]>();
  const parts = status.split("\0");
  for (let i = 0; i + 1 < parts.length; i += 2) {
    const code = parts[i];
    how.set(parts[i + 1]!, code === "A" ? "added" : code === "D" ? "deleted" : "modified");
  }
  const files: ChangedFile[] = [];
  for (const line of numstat.split("\0").filter(Boolean)) {
    const [added, removed, path] = line.split("\t");
    if (path === undefined) continue;
    files.push({
      path: path.slice(place.prefix.length),
      status: how.get(path) ?? "modified",
      added: added === "-" ? null : Number(added),
      removed: removed === "-" ? null : Number(removed),
    });
  }
  return files;
}

/** The unified diff from `from` to `to` in the folder (paths as in the work tree). */
export function patch(place: Place, from: string, to: string): Promise<string> {
  if (from === to) return Promise.resolve("");
  return must(place, ["diff", "--no-color", "--no-renames", from, to, "--", folderSpec(place)]);
}
