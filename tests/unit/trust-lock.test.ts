import { describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readFileSync, rmdirSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { trustFolderLocked } from "../../src/agents/claude/launch.ts";
import { tempDir } from "../helpers/temp.ts";

/** A config as Claude Code keeps it, and the lock directory it takes around its own writes. */
function config() {
  const file = join(tempDir(), ".claude.json");
  writeFileSync(file, JSON.stringify({ numStartups: 3, projects: { "/other": { lastCost: 1 } } }));
  return { file, lock: `${file}.lock`, read: () => JSON.parse(readFileSync(file, "utf8")) };
}

describe("the trust entry is written under Claude Code's config lock", () => {
  test("a free lock is taken for the write and given back", async () => {
    const { file, lock, read } = config();
    await trustFolderLocked(file, "/work/repo");
    expect(read()).toEqual({
      numStartups: 3,
      projects: { "/other": { lastCost: 1 }, "/work/repo": { hasTrustDialogAccepted: true } },
    });
    expect(existsSync(lock)).toBe(false);
  });

  test("while an agent holds the lock nothing is written; once it lets go, the entry is", async () => {
    const { file, lock, read } = config();
    mkdirSync(lock);
    const writing = trustFolderLocked(file, "/work/repo");
    await Bun.sleep(50);
    expect(read().projects["/work/repo"]).toBeUndefined();
    rmdirSync(lock);
    await writing;
    expect(read().projects["/work/repo"]).toEqual({ hasTrustDialogAccepted: true });
    expect(existsSync(lock)).toBe(false);
  });

  test("a lock that is never released (a crashed agent) does not stop the launch, and stays", async () => {
    const { file, lock, read } = config();
    mkdirSync(lock);
    await trustFolderLocked(file, "/work/repo");
    expect(read().projects["/work/repo"]).toEqual({ hasTrustDialogAccepted: true });
    expect(existsSync(lock)).toBe(true); // not ag's to remove
  });

  test("an already trusted folder (or its parent) takes no lock and writes nothing", async () => {
    const { file, lock } = config();
    await trustFolderLocked(file, "/work");
    const before = statSync(file).mtimeMs;
    mkdirSync(lock); // would make ag wait, if it looked at the lock
    await trustFolderLocked(file, "/work/repo/sub");
    expect(statSync(file).mtimeMs).toBe(before);
  });

  test("an unreadable config is left alone", async () => {
    const { file, lock } = config();
    writeFileSync(file, "{ not json");
    await trustFolderLocked(file, "/work/repo");
    expect(readFileSync(file, "utf8")).toBe("{ not json");
    expect(existsSync(lock)).toBe(false);
  });
});
