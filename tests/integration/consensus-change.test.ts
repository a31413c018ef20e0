import { describe, expect, test } from "bun:test";
import { existsSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { collectChange, MAX_CHANGE_CHARS } from "../../src/consensus/change.ts";
import { headCommit } from "../../src/shared/git.ts";
import { git, gitRepository } from "../helpers/git.ts";
import { tempDir } from "../helpers/temp.ts";

/** A repository whose last commit adds a.txt. */
function repository(): string {
  const dir = gitRepository(tempDir("ag-repo-"));
  writeFileSync(join(dir, "a.txt"), "one\n");
  git(dir, "add", ".");
  git(dir, "commit", "-q", "-m", "a.txt");
  return dir;
}

describe("the change a review is given", () => {
  test("git: what the session committed and what it left uncommitted since its start commit, new files whole", async () => {
    const dir = repository();
    const base = await headCommit(dir);
    expect(base).toMatch(/^[0-9a-f]{40}$/);
    writeFileSync(join(dir, "a.txt"), "one\ntwo\n");
    git(dir, "commit", "-q", "-am", "the session's commit");
    writeFileSync(join(dir, "b.txt"), "bee\n");
    git(dir, "add", "b.txt");
    writeFileSync(join(dir, "a.txt"), "one\ntwo\nthree\n");
    writeFileSync(join(dir, "new.txt"), "brand new\n");
    const collected = await collectChange({ workDir: dir, baseCommit: base, filesTouched: [] });
    expect(collected.change).toMatchObject({ kind: "git", base, truncated: false });
    expect(collected.change.files.sort()).toEqual(["a.txt", "b.txt", "new.txt"]);
    expect(collected.text).toContain("+two\n+three");
    expect(collected.text).toContain("+bee");
    expect(collected.text).toContain("+brand new");
    expect(collected.description).toContain(base!.slice(0, 12));
  });

  test("git without a known start commit: against HEAD, and the brief says so", async () => {
    const dir = repository();
    writeFileSync(join(dir, "a.txt"), "changed\n");
    const collected = await collectChange({ workDir: dir, baseCommit: null, filesTouched: [] });
    expect(collected.change.files).toEqual(["a.txt"]);
    expect(collected.description).toContain("against HEAD");
  });

  test("outside git: the files the transcript says were written, as they are now; a gone one named", async () => {
    const dir = tempDir("ag-plain-");
    writeFileSync(join(dir, "kept.txt"), "still here\n");
    const collected = await collectChange({
      workDir: dir,
      baseCommit: null,
      filesTouched: [join(dir, "kept.txt"), join(dir, "gone.txt")],
    });
    expect(collected.change).toMatchObject({ kind: "files", base: null, truncated: false });
    expect(collected.text).toContain("=== kept.txt\nstill here");
    expect(collected.text).toContain("=== gone.txt (gone: deleted or moved since)");
    const nothing = await collectChange({ workDir: dir, baseCommit: null, filesTouched: [] });
    expect(nothing.change.kind).toBe("none");
  });

  test("a change too big for the brief is cut at a line end, and says so", async () => {
    const dir = repository();
    const base = await headCommit(dir);
    writeFileSync(join(dir, "big.txt"), `${"x".repeat(99)}\n`.repeat(1_000));
    const collected = await collectChange({ workDir: dir, baseCommit: base, filesTouched: [] });
    expect(collected.change.truncated).toBe(true);
    expect(collected.text.length).toBeLessThan(MAX_CHANGE_CHARS + 200);
    expect(collected.text).toMatch(/\n\[… \d+ more characters cut: read the files themselves\]$/);
  });
});

// The pure part (the overrides for each config name) is in tests/unit/environment.test.ts.
describe("a reviewed repository's config runs nothing for ag", () => {
  test("a planted clean/process filter, textconv, external diff and fsmonitor do not run; the diff is still right", async () => {
    const dir = gitRepository(tempDir("ag-repo-"));
    const marks = tempDir("ag-marks-");
    writeFileSync(join(dir, "a.txt"), "one\n");
    git(dir, "add", ".");
    git(dir, "commit", "-q", "-m", "a");
    const base = await headCommit(dir);
    writeFileSync(join(dir, ".gitattributes"), "*.txt filter=evil diff=evil\n");
    const mark = (name: string) => `sh -c 'env > ${join(marks, name)}; cat'`;
    git(dir, "config", "filter.evil.clean", mark("clean"));
    git(dir, "config", "filter.evil.process", mark("process"));
    git(dir, "config", "filter.evil.required", "true");
    git(dir, "config", "diff.evil.textconv", mark("textconv"));
    git(dir, "config", "diff.evil.command", mark("command"));
    git(dir, "config", "diff.external", mark("external"));
    git(dir, "config", "core.fsmonitor", mark("fsmonitor"));
    writeFileSync(join(dir, "a.txt"), "one\ntwo\n");
    const collected = await collectChange({ workDir: dir, baseCommit: base, filesTouched: [] });
    expect(collected.text).toContain("+two");
    expect(readdirSync(marks)).toEqual([]);
    // The same repository does run them for a plain git: the plant is real.
    Bun.spawnSync(["git", "diff", base ?? "HEAD"], { cwd: dir });
    expect(readdirSync(marks).length).toBeGreaterThan(0);
    expect(existsSync(join(marks, "process")) || existsSync(join(marks, "fsmonitor"))).toBe(true);
  });
});
