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
 * What differs between the folder and the session's index: new files (ignored ones left out),
 * changed and deleted ones. The one walk of the folder a checkpoint makes (changed files are
 * then hashed by name, never found by a second walk).
 */
async function changedPaths(place: Place): Promise<string[]> {
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
  // A folder with a trailing slash is a repository inside the folder: not snapshotted.
  return [...new Set(listed.split("\0"))].filter((path) => path !== "" && !path.endsWith("/"));
}

/** Whether the file at `path` is over `maxFileBytes` (a deleted one is not). */
function isOversized(place: Place, path: string, maxFileBytes: number): boolean {
  try {
    const stat = lstatSync(join(place.workTree, path));
    return stat.isFile() && stat.size > maxFileBytes;
  } catch {
    return false;
  }
}

/** A split index would write its shared part into the repository's git dir: one whole file instead. */
const UPDATE = ["-c", "core.splitIndex=false", "update-index"];

/**
 * Takes what changed in the folder into the session's index — new and changed files added,
 * deleted ones removed, files over `maxFileBytes` left out (and out of the index if it held
 * them) — and writes its tree: the tree's id. Paths go on stdin: a file name never becomes an
 * argument, nor too long a command line.
 */
export async function writeTree(place: Place, maxFileBytes: number): Promise<string> {
  const paths = await changedPaths(place);
  const big = paths.filter((path) => isOversized(place, path, maxFileBytes));
  const taken = paths.filter((path) => !big.includes(path));
  const list = (names: string[]) => `${names.join("\0")}\0`;
  if (taken.length > 0) await must(place, [...UPDATE, "--add", "--remove", "-z", "--stdin"], list(taken));
  if (big.length > 0) await must(place, [...UPDATE, "--force-remove", "-z", "--stdin"], list(big));
  return (await must(place, ["write-tree"])).trim();
}

/** The tree a commit records (remembered: a checkpoint's parent is asked for at every turn). */
const trees = new Map<string, string>();
const TREES_KEPT = 1000;

export async function treeOf(place: Place, commit: string): Promise<string> {
  const known = trees.get(commit);
  if (known) return known;
  const tree = (await must(place, ["rev-parse", `${commit}^{tree}`])).trim();
  remember(commit, tree);
  return tree;
}

function remember(commit: string, tree: string): void {
  trees.set(commit, tree);
  if (trees.size > TREES_KEPT) trees.delete(trees.keys().next().value!);
}

/**
 * A commit of `tree` on top of `parent`; when `parent` already records that tree, nothing is
 * written and `parent` is the answer (an unchanged folder costs no commit).
 */
export async function commitTree(
  place: Place,
  tree: string,
  parent: string | null,
  message: string,
): Promise<string> {
  if (parent && (await treeOf(place, parent)) === tree) return parent;
  const args = ["commit-tree", tree, ...(parent ? ["-p", parent] : []), "-m", message];
  const commit = (await must(place, args)).trim();
  remember(commit, tree);
  return commit;
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

/**
 * What changed from `from` to `to` in the folder, file by file, with lines added and removed:
 * one `diff-tree --raw --numstat -z`, whose raw records (":modes ids status\0path\0") come
 * first and numstat records ("added\tremoved\tpath\0") after.
 */
export async function changedFiles(place: Place, from: string, to: string): Promise<ChangedFile[]> {
  if (from === to) return [];
  const out = await must(place, [
    "diff-tree",
    "-r",
    "-z",
    "--no-renames",
    "--raw",
    "--numstat",
    from,
    to,
    "--",
    folderSpec(place),
  ]);
  const tokens = out.split("\0");
  const how = new Map<string, ChangedFile["status"]>();
  const files: ChangedFile[] = [];
  for (let i = 0; i < tokens.length; i++) {
    const token = tokens[i]!;
    if (token.startsWith(":")) {
      const code = token.at(-1);
      how.set(tokens[++i]!, code === "A" ? "added" : code === "D" ? "deleted" : "modified");
      continue;
    }
    const [added, removed, path] = token.split("\t");
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
