import { describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createCheckpointRepo, createCheckpointService } from "../../src/checkpoints/index.ts";
import { createLogger } from "../../src/shared/log.ts";
import { openDatabase } from "../../src/store/db.ts";
import { createManualClock } from "../fakes/clock.ts";
import { git, gitRepository } from "../helpers/git.ts";
import { tempDir } from "../helpers/temp.ts";

const logger = createLogger({ level: "silent", json: false });

function checkpoints(settings: { keepTurns?: number; keepDays?: number; maxFileBytes?: number } = {}) {
  const state = tempDir("ag-state-");
  const db = openDatabase(join(state, "state.db"));
  const clock = createManualClock(Date.parse("2026-11-29T09:00:00Z"));
  const service = createCheckpointService({
    repo: createCheckpointRepo(db),
    root: join(state, "checkpoints"),
    clock,
    logger,
    settings: { maxFileBytes: 1000, keepTurns: 0, keepDays: 0, ...settings },
  });
  return { service, clock, state };
}

function gitOut(dir: string, ...args: string[]): string {
  // GIT_OPTIONAL_LOCKS=0: the test's own `git status` must not refresh the index it compares.
  const env = { ...process.env, GIT_OPTIONAL_LOCKS: "0" };
  const result = Bun.spawnSync(["git", ...args], { cwd: dir, stderr: "pipe", env });
  if (result.exitCode !== 0) throw new Error(`git ${args.join(" ")}: ${result.stderr.toString()}`);
  return result.stdout.toString();
}

/**
 * A repository with the user's own state: a branch, a staged change, a stash, uncommitted work,
 * an ignored file and a large one.
 */
function userRepository(): string {
  const dir = gitRepository(tempDir("ag-repo-"));
  git(dir, "checkout", "-q", "-b", "feature");
  writeFileSync(join(dir, ".gitignore"), "ignored.log\n");
  writeFileSync(join(dir, "kept.txt"), "kept\n");
  git(dir, "add", ".");
  git(dir, "commit", "-q", "-m", "kept");
  writeFileSync(join(dir, "kept.txt"), "stashed\n");
  git(dir, "stash", "-q");
  writeFileSync(join(dir, "staged.txt"), "staged\n");
  git(dir, "add", "staged.txt");
  writeFileSync(join(dir, "README.md"), "a project\nthe user's uncommitted line\n");
  writeFileSync(join(dir, "ignored.log"), "log\n");
  writeFileSync(join(dir, "big.bin"), "x".repeat(5000));
  return dir;
}

/** What of the user's repository must never change: bytes of its index, HEAD, refs, stash. */
function userState(dir: string) {
  return {
    index: readFileSync(join(dir, ".git", "index")).toString("base64"),
    head: readFileSync(join(dir, ".git", "HEAD"), "utf8"),
    branches: gitOut(dir, "for-each-ref", "refs/heads", "refs/tags", "refs/stash"),
    stash: gitOut(dir, "stash", "list", "-p"),
    status: gitOut(dir, "status", "--porcelain=v2", "--branch", "--untracked-files=all", "--ignored"),
  };
}

/** The code of the AgError `promise` rejects with. */
async function codeOf(promise: Promise<unknown>): Promise<string | null> {
  return promise.then(
    () => null,
    (error: { code?: string }) => error.code ?? null,
  );
}

const read = (dir: string, name: string) => readFileSync(join(dir, name), "utf8");

describe("a session's checkpoints in a git repository", () => {
  test("each turn's files and lines, a rewind to turn 1 and to turn 0, and its undo: the user's branch, index and stash untouched", async () => {
    const dir = userRepository();
    const { service } = checkpoints();
    const before = userState(dir);

    await service.beforePrompt("s1", dir, "write a.txt");
    writeFileSync(join(dir, "a.txt"), "one\n");
    await service.turnEnded("s1", dir);
    expectUntouched(userState(dir), before);
    await service.beforePrompt("s1", dir, "edit a.txt");
    writeFileSync(join(dir, "a.txt"), "one\ntwo\nthree\n");
    await service.turnEnded("s1", dir);
    await service.beforePrompt("s1", dir, "make a file by shell");
    mkdirSync(join(dir, "made", "deep"), { recursive: true });
    writeFileSync(join(dir, "made", "deep", "shell.txt"), "by shell\n");
    await service.turnEnded("s1", dir);

    const list = await service.list("s1", dir);
    expect(list.shadow).toBe(false);
    expect(list.checkpoints.map((c) => [c.turn, c.prompt, c.files, c.added, c.removed])).toEqual([
      [1, "write a.txt", [{ path: "a.txt", status: "added", added: 1, removed: 0 }], 1, 0],
      [2, "edit a.txt", [{ path: "a.txt", status: "modified", added: 2, removed: 0 }], 2, 0],
      [
        3,
        "make a file by shell",
        [{ path: "made/deep/shell.txt", status: "added", added: 1, removed: 0 }],
        1,
        0,
      ],
    ]);
    const diff = await service.diff("s1", dir, 2);
    expect(diff.patch).toContain("+two\n+three\n");
    // Checkpoints so far changed nothing of the user's.
    expectUntouched(userState(dir), before);

    const present = userState(dir);
    expect(await service.pending("s1", dir, 1)).toContain("-two");
    const rewound = await service.rewind("s1", dir, 1);
    expect(rewound.undoable).toBe(true);
    expect(read(dir, "a.txt")).toBe("one\n");
    expect(existsSync(join(dir, "made"))).toBe(false);
    // The user's earlier uncommitted work, ignored file and large file are as they were.
    expect(read(dir, "README.md")).toBe("a project\nthe user's uncommitted line\n");
    expect(read(dir, "ignored.log")).toBe("log\n");
    expect(statSync(join(dir, "big.bin")).size).toBe(5000);
    expectUntouched(userState(dir), present);
    expect((await service.list("s1", dir)).undo).toMatchObject({ turn: 1 });

    expect(await service.undo("s1", dir)).toMatchObject({ turn: 1 });
    expect(read(dir, "a.txt")).toBe("one\ntwo\nthree\n");
    expect(read(dir, "made/deep/shell.txt")).toBe("by shell\n");
    expect(userState(dir)).toEqual(present);
    expect((await service.list("s1", dir)).undo).toBeNull();

    await service.rewind("s1", dir, 0);
    expect(existsSync(join(dir, "a.txt"))).toBe(false);
    expect(read(dir, "staged.txt")).toBe("staged\n");
    await service.undo("s1", dir);
    expect(userState(dir)).toEqual(present);
  });

  test("an unchanged folder costs no commit; two sessions in one folder keep their own lines", async () => {
    const dir = gitRepository(tempDir("ag-repo-"));
    const { service } = checkpoints();
    await service.beforePrompt("a", dir, "one");
    await service.beforePrompt("b", dir, "other");
    writeFileSync(join(dir, "a.txt"), "a\n");
    await service.turnEnded("a", dir);
    await service.turnEnded("b", dir);
    await service.beforePrompt("a", dir, "nothing");
    await service.turnEnded("a", dir);
    const refs = gitOut(dir, "for-each-ref", "--format=%(refname) %(objectname)", "refs/ag/checkpoints");
    const lines = Object.fromEntries(
      refs
        .trim()
        .split("\n")
        .map((l) => l.split(" ")),
    );
    expect(Object.keys(lines).sort()).toEqual([
      "refs/ag/checkpoints/a/0",
      "refs/ag/checkpoints/a/1",
      "refs/ag/checkpoints/a/2",
      "refs/ag/checkpoints/b/0",
      "refs/ag/checkpoints/b/1",
    ]);
    // Turn 2 changed nothing: its checkpoint is turn 1's commit.
    expect(lines["refs/ag/checkpoints/a/2"]).toBe(lines["refs/ag/checkpoints/a/1"]);
    expect((await service.list("a", dir)).checkpoints[1]?.files).toEqual([]);
    expect((await service.list("b", dir)).checkpoints[0]?.files.map((f) => f.path)).toEqual(["a.txt"]);
  });

  test("a session in a subfolder checkpoints and rewinds only that folder", async () => {
    const repo = gitRepository(tempDir("ag-repo-"));
    const dir = join(repo, "pkg");
    mkdirSync(dir);
    const { service } = checkpoints();
    await service.beforePrompt("s", dir, "go");
    writeFileSync(join(dir, "in.txt"), "in\n");
    writeFileSync(join(repo, "outside.txt"), "outside\n");
    await service.turnEnded("s", dir);
    expect((await service.list("s", dir)).checkpoints[0]?.files.map((f) => f.path)).toEqual(["in.txt"]);
    await service.rewind("s", dir, 0);
    expect(existsSync(join(dir, "in.txt"))).toBe(false);
    expect(read(repo, "outside.txt")).toBe("outside\n");
  });

  test("retention prunes the oldest turns and their refs; the rest still diff and rewind", async () => {
    const dir = gitRepository(tempDir("ag-repo-"));
    const { service } = checkpoints({ keepTurns: 2 });
    for (const n of [1, 2, 3]) {
      await service.beforePrompt("s", dir, `turn ${n}`);
      writeFileSync(join(dir, "n.txt"), `${n}\n`);
      await service.turnEnded("s", dir);
    }
    expect((await service.list("s", dir)).checkpoints.map((c) => c.turn)).toEqual([2, 3]);
    expect(gitOut(dir, "for-each-ref", "--format=%(refname)", "refs/ag").trim().split("\n")).toEqual([
      "refs/ag/checkpoints/s/2",
      "refs/ag/checkpoints/s/3",
    ]);
    expect(await codeOf(service.rewind("s", dir, 1))).toBe("CHECKPOINT_NOT_FOUND");
    expect((await service.diff("s", dir, 2)).patch).toContain("-1\n+2");
    await service.rewind("s", dir, 2);
    expect(read(dir, "n.txt")).toBe("2\n");
  });

  test("days retention, and a deleted session's line removed whole", async () => {
    const dir = gitRepository(tempDir("ag-repo-"));
    const { service, clock, state } = checkpoints({ keepDays: 1 });
    await service.beforePrompt("s", dir, "old");
    await service.turnEnded("s", dir);
    clock.advance(2 * 86_400_000);
    await service.beforePrompt("s", dir, "new");
    writeFileSync(join(dir, "x.txt"), "x\n");
    await service.turnEnded("s", dir);
    expect((await service.list("s", dir)).checkpoints.map((c) => c.turn)).toEqual([2]);
    expect(await service.sweep((id) => id !== "s")).toBe(1);
    expect(gitOut(dir, "for-each-ref", "refs/ag")).toBe("");
    expect((await service.list("s", dir)).checkpoints).toEqual([]);
    expect(readdirSync(join(state, "checkpoints", "index"))).toEqual([]);
  });
});

describe("what a checkpoint leaves alone", () => {
  test("a repository in the middle of a conflicted merge: checkpoints still taken, its index untouched", async () => {
    const dir = gitRepository(tempDir("ag-repo-"));
    git(dir, "checkout", "-q", "-b", "other");
    writeFileSync(join(dir, "README.md"), "theirs\n");
    git(dir, "commit", "-q", "-am", "theirs");
    git(dir, "checkout", "-q", "-");
    writeFileSync(join(dir, "README.md"), "ours\n");
    git(dir, "commit", "-q", "-am", "ours");
    Bun.spawnSync(["git", "merge", "-q", "other"], { cwd: dir, stdout: "ignore", stderr: "ignore" });
    expect(gitOut(dir, "ls-files", "-u")).not.toBe("");
    const before = userState(dir);
    const { service } = checkpoints();
    await service.beforePrompt("s", dir, "go");
    writeFileSync(join(dir, "a.txt"), "a\n");
    await service.turnEnded("s", dir);
    expect((await service.list("s", dir)).checkpoints[0]?.files.map((f) => f.path)).toEqual(["a.txt"]);
    expectUntouched(userState(dir), before);
  });

  test("no program the repository's config names runs (hooks, fsmonitor, a filter); files over the bound stay out and stay put", async () => {
    const dir = gitRepository(tempDir("ag-repo-"));
    const marks = tempDir("ag-marks-");
    const script = (name: string) => {
      const path = join(marks, `${name}.sh`);
      writeFileSync(path, `#!/bin/sh\ntouch ${join(marks, name)}.ran\ncat\n`, { mode: 0o755 });
      return path;
    };
    mkdirSync(join(dir, "hooks"));
    writeFileSync(join(dir, "hooks", "post-index-change"), `#!/bin/sh\ntouch ${join(marks, "hook")}.ran\n`, {
      mode: 0o755,
    });
    git(dir, "config", "core.hooksPath", join(dir, "hooks"));
    git(dir, "config", "core.fsmonitor", script("fsmonitor"));
    git(dir, "config", "filter.evil.clean", script("clean"));
    writeFileSync(join(dir, ".gitattributes"), "*.txt filter=evil\n");
    const { service } = checkpoints();
    await service.beforePrompt("s", dir, "go");
    writeFileSync(join(dir, "a.txt"), "a\n");
    writeFileSync(join(dir, "big.bin"), "x".repeat(1500));
    await service.turnEnded("s", dir);
    const files = (await service.list("s", dir)).checkpoints[0]?.files.map((f) => f.path);
    expect(files).toEqual(["a.txt"]);
    await service.rewind("s", dir, 0);
    expect(existsSync(join(dir, "a.txt"))).toBe(false);
    expect(statSync(join(dir, "big.bin")).size).toBe(1500);
    expect(readdirSync(marks).filter((name) => name.endsWith(".ran"))).toEqual([]);
  });
});

describe("a session's checkpoints in a folder that is no repository", () => {
  test("a shadow repository in the state directory: turns, rewind, undo; the folder gets no .git", async () => {
    const dir = tempDir("ag-plain-");
    writeFileSync(join(dir, ".gitignore"), "ignored.log\n");
    writeFileSync(join(dir, "ignored.log"), "log\n");
    writeFileSync(join(dir, "mine.txt"), "mine\n");
    const { service, state } = checkpoints();
    await service.beforePrompt("s", dir, "write");
    writeFileSync(join(dir, "a.txt"), "a\n");
    await service.turnEnded("s", dir);
    await service.beforePrompt("s", dir, "shell");
    writeFileSync(join(dir, "shell.txt"), "shell\n");
    writeFileSync(join(dir, "ignored.log"), "log 2\n");
    await service.turnEnded("s", dir);
    const list = await service.list("s", dir);
    expect(list.shadow).toBe(true);
    expect(list.checkpoints.map((c) => c.files.map((f) => f.path))).toEqual([["a.txt"], ["shell.txt"]]);
    await service.rewind("s", dir, 1);
    expect(existsSync(join(dir, "shell.txt"))).toBe(false);
    expect(read(dir, "ignored.log")).toBe("log 2\n");
    expect(read(dir, "mine.txt")).toBe("mine\n");
    await service.undo("s", dir);
    expect(read(dir, "shell.txt")).toBe("shell\n");
    expect(existsSync(join(dir, ".git"))).toBe(false);
    expect(readdirSync(join(state, "checkpoints", "shadow"))).toHaveLength(1);
  });
});

/** The user's index (byte for byte), HEAD, branches and stash are as they were. */
function expectUntouched(now: ReturnType<typeof userState>, then: ReturnType<typeof userState>): void {
  expect(now.index).toBe(then.index);
  expect(now.head).toBe(then.head);
  expect(now.branches).toBe(then.branches);
  expect(now.stash).toBe(then.stash);
}
