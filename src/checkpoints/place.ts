import { createHash } from "node:crypto";
import { copyFileSync, existsSync, mkdirSync, statSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { AgError } from "../shared/errors.ts";
import { type GitRunner, gitRunner } from "../shared/git.ts";

/**
 * Where a folder's checkpoints live: the folder's own repository when it is in one (objects in
 * its object store, refs under refs/ag/checkpoints/), else a shadow repository in ag's state
 * directory whose work tree is the folder. Either way each session has its own index file in
 * the state directory: the user's index, HEAD, branches and stash are never read for writing.
 */
export interface Place {
  /** The folder whose files are checkpointed. */
  folder: string;
  /** The work tree's top: git's paths are relative to it. */
  workTree: string;
  /** The folder inside the work tree ("" at its top, else "sub/dir/"). */
  prefix: string;
  /** A shadow repository in ag's state directory (the folder is no repository). */
  shadow: boolean;
  /** The session's own index file (GIT_INDEX_FILE). */
  index: string;
  /** The repository's git dir (the shadow's, outside a repository). */
  gitDir: string;
  /** git with the session's index, the repository and the work tree set. */
  git: GitRunner;
}

/** A git identity for checkpoint commits: the user's own is never read nor needed. */
const IDENTITY = {
  GIT_AUTHOR_NAME: "ag",
  GIT_AUTHOR_EMAIL: "ag@localhost",
  GIT_COMMITTER_NAME: "ag",
  GIT_COMMITTER_EMAIL: "ag@localhost",
};

/** What a shadow repository leaves out besides the folder's own .gitignore files. */
const SHADOW_EXCLUDES = ["node_modules/", ".git/", ""].join("\n");

/** A snapshot of 10k files the first time (every file hashed) takes longer than a read. */
const TIMEOUT_MS = 120_000;

export interface PlaceOptions {
  /** ag's checkpoints directory (<stateDir>/checkpoints). */
  root: string;
  sessionId: string;
}

/** The place of `folder`'s checkpoints for one session. */
export async function placeOf(folder: string, options: PlaceOptions): Promise<Place> {
  const index = join(options.root, "index", `${options.sessionId}.index`);
  mkdirSync(join(options.root, "index"), { recursive: true });
  const found = await repositoryOf(folder);
  if (found) {
    const env = { ...IDENTITY, GIT_DIR: found.gitDir, GIT_WORK_TREE: found.workTree, GIT_INDEX_FILE: index };
    const git = await gitRunner(found.workTree, { env, timeoutMs: TIMEOUT_MS });
    if (!git) throw unavailable(folder);
    const { workTree, prefix, gitDir } = found;
    return { folder, workTree, prefix, shadow: false, index, gitDir, git };
  }
  const gitDir = await shadowRepository(folder, options.root);
  const env = { ...IDENTITY, GIT_DIR: gitDir, GIT_WORK_TREE: folder, GIT_INDEX_FILE: index };
  const git = await gitRunner(folder, { env, timeoutMs: TIMEOUT_MS });
  if (!git) throw unavailable(folder);
  return { folder, workTree: folder, prefix: "", shadow: true, index, gitDir, git };
}

/**
 * A session's first index is a copy of the repository's own (read, never written): its stat data
 * spares hashing every file at the first checkpoint (2.6 s for 10k files / 200 MB). The copy keeps
 * the original's times, which git's racy-clean check compares entries against. What the user
 * staged is no matter: a file that differs from its entry is listed as modified and taken as it
 * is. An index git cannot build a tree from (a merge in progress) is dropped for an empty one.
 */
export function seedIndex(place: Place): void {
  if (place.shadow || existsSync(place.index)) return;
  const own = join(place.gitDir, "index");
  const index = place.index;
  try {
    copyFileSync(own, index);
    const { atime, mtime } = statSync(own);
    utimesSync(index, atime, mtime);
  } catch {
    // No index yet (a repository without commits): the session's starts empty.
  }
}

/** The repository `folder` is in (its git dir, top and the folder's prefix), or null. */
async function repositoryOf(
  folder: string,
): Promise<{ gitDir: string; workTree: string; prefix: string } | null> {
  const git = await gitRunner(folder);
  if (!git) throw unavailable(folder);
  const result = await git(["rev-parse", "--absolute-git-dir", "--show-toplevel", "--show-prefix"]);
  if (result?.code !== 0) return null;
  const [gitDir, workTree, prefix] = result.stdout.split("\n");
  if (!gitDir || !workTree) return null; // a bare repository, or inside .git: no work tree
  return { gitDir, workTree, prefix: prefix ?? "" };
}

/** The shadow repository of a folder that is not one, made the first time. */
async function shadowRepository(folder: string, root: string): Promise<string> {
  const name = createHash("sha256").update(folder).digest("hex").slice(0, 24);
  const gitDir = join(root, "shadow", `${name}.git`);
  if (existsSync(join(gitDir, "HEAD"))) return gitDir;
  mkdirSync(gitDir, { recursive: true });
  const git = await gitRunner(root);
  const made = await git?.(["init", "-q", "--bare", gitDir]);
  if (made?.code !== 0) throw unavailable(folder, made?.stderr);
  mkdirSync(join(gitDir, "info"), { recursive: true });
  writeFileSync(join(gitDir, "info", "exclude"), SHADOW_EXCLUDES);
  // A record of whose shadow it is, for a person looking into the state directory.
  writeFileSync(join(gitDir, "description"), `ag checkpoints of ${folder}\n`);
  return gitDir;
}

function unavailable(folder: string, why?: string): AgError {
  return new AgError(
    "CHECKPOINT_UNAVAILABLE",
    `checkpoints of ${folder} cannot be made: git ${why ? `said: ${why.trim()}` : "is missing or did not answer"}`,
  );
}
