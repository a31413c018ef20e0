import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Browser } from "playwright-core";
import { type AgentWorld, startAgentWorld } from "../helpers/agent-world.ts";
import { launchChromium } from "../helpers/browser.ts";
import { git } from "../helpers/git.ts";
import { until } from "../helpers/until.ts";

// biome-ignore lint/suspicious/noExplicitAny: response bodies are inspected field by field
type Json = Record<string, any>;

/**
 * A checkpoint at every turn, on the real Claude Code through the mock model: three turns (a
 * file written by a tool, the file edited, a file made by a shell command), listed with their
 * files; the folder rewound to turn 1 and the rewind undone; the conversation rewound to turn 1
 * (the model then sees only that turn). In a git repository with the user's own branch, index,
 * stash and uncommitted work, which no checkpoint and no rewind touches; and in a plain folder.
 */
let world: AgentWorld;
let browser: Browser;
/** The git repository's session and folder, which the console's test rewinds again. */
let repoSession: { id: string; dir: string };

beforeAll(async () => {
  [world, browser] = await Promise.all([startAgentWorld(), launchChromium()]);
}, 60_000);
afterAll(async () => {
  await browser?.close();
  await world?.stop();
});

const TURNS = ["edit file", "change file", "run cmd: echo made > shell.txt"];
const read = (dir: string, name: string) => readFileSync(join(dir, name), "utf8");

function gitOut(dir: string, ...args: string[]): string {
  const env = { ...process.env, GIT_OPTIONAL_LOCKS: "0" };
  return Bun.spawnSync(["git", ...args], { cwd: dir, env }).stdout.toString();
}

/** The user's repository state no checkpoint may change: index bytes, HEAD, refs, stash. */
function userState(dir: string) {
  return {
    index: readFileSync(join(dir, ".git", "index")).toString("base64"),
    head: read(dir, ".git/HEAD"),
    refs: gitOut(dir, "for-each-ref", "refs/heads", "refs/stash"),
    stash: gitOut(dir, "stash", "list", "-p"),
    readme: read(dir, "README.md"),
  };
}

/** The session's checkpoints once `turns` turns have ended. */
async function checkpointsAfter(id: string, turns: number): Promise<Json> {
  let list: Json = {};
  await until(async () => {
    list = (await world.api<Json>("GET", `/v1/sessions/${id}/checkpoints`)).body;
    return list.checkpoints?.length === turns && list.checkpoints.at(-1).endedAt !== null;
  }, 90_000);
  return list;
}

/** Three turns in `workDir`: answers the session's id and its checkpoints. */
async function threeTurns(workDir: string): Promise<{ id: string; list: Json }> {
  const created = await world.api<Json>("POST", "/v1/sessions", {
    workDir,
    prompt: TURNS[0],
    permissionMode: "bypassPermissions",
  });
  expect(created.status).toBe(201);
  const id = created.body.id as string;
  await checkpointsAfter(id, 1);
  for (const [i, text] of TURNS.slice(1).entries()) {
    await world.waitFor(id, "idle", 60_000);
    expect((await world.api("POST", `/v1/sessions/${id}/send`, { text })).status).toBe(200);
    await checkpointsAfter(id, i + 2);
  }
  await world.waitFor(id, "idle", 60_000);
  return { id, list: await checkpointsAfter(id, 3) };
}

function expectThreeTurns(list: Json): void {
  expect(list.checkpoints.map((c: Json) => [c.turn, c.prompt, c.files])).toEqual([
    [1, TURNS[0], [{ path: "hello.txt", status: "added", added: 1, removed: 0 }]],
    [2, TURNS[1], [{ path: "hello.txt", status: "modified", added: 1, removed: 1 }]],
    [3, TURNS[2], [{ path: "shell.txt", status: "added", added: 1, removed: 0 }]],
  ]);
}

/** Rewinds the folder to turn 1 and back; checks what each leaves. */
async function rewindAndUndo(id: string, dir: string): Promise<void> {
  const rewound = await world.api<Json>("POST", `/v1/sessions/${id}/rewind`, { turn: 1, what: "code" });
  expect(rewound.status).toBe(200);
  expect(rewound.body).toMatchObject({ turn: 1, what: "code", code: { files: 2, undoable: true } });
  expect(read(dir, "hello.txt")).toBe("hello from the mock\n");
  expect(existsSync(join(dir, "shell.txt"))).toBe(false);
  const undone = await world.api<Json>("POST", `/v1/sessions/${id}/rewind`, { undo: true });
  expect(undone.body).toMatchObject({ what: "undo", turn: 1 });
  expect(read(dir, "hello.txt")).toBe("goodbye from the mock\n");
  expect(read(dir, "shell.txt")).toBe("made\n");
}

describe("checkpoints and rewind on the real Claude Code", () => {
  test("a git repository with the user's own work: three turns, code rewound to turn 1 and undone, the conversation rewound", async () => {
    const dir = join(world.workDir, "repo");
    mkdirSync(dir);
    git(dir, "init", "-q", "-b", "main");
    git(dir, "config", "user.email", "user@example.com");
    git(dir, "config", "user.name", "user");
    writeFileSync(join(dir, "README.md"), "a project\n");
    writeFileSync(join(dir, "notes.txt"), "notes\n");
    git(dir, "add", ".");
    git(dir, "commit", "-q", "-m", "start");
    git(dir, "checkout", "-q", "-b", "feature");
    writeFileSync(join(dir, "notes.txt"), "stashed notes\n");
    git(dir, "stash", "-q");
    writeFileSync(join(dir, "staged.txt"), "staged\n");
    git(dir, "add", "staged.txt");
    writeFileSync(join(dir, "README.md"), "a project\nmy uncommitted line\n");
    const before = userState(dir);

    const { id, list } = await threeTurns(dir);
    repoSession = { id, dir };
    expect(list.shadow).toBe(false);
    expectThreeTurns(list);
    expect(userState(dir)).toEqual(before);
    const diff = await world.api<Json>("GET", `/v1/sessions/${id}/checkpoints/2/diff`);
    expect(diff.body.patch).toContain("-hello from the mock\n+goodbye from the mock\n");

    await rewindAndUndo(id, dir);
    expect(userState(dir)).toEqual(before);

    const forked = await world.api<Json>("POST", `/v1/sessions/${id}/rewind`, {
      turn: 1,
      what: "conversation",
    });
    expect(forked.status).toBe(200);
    const fork = forked.body.conversation.sessionId as string;
    expect(fork).not.toBe(id);
    await world.waitFor(fork, "idle", 60_000);
    expect((await world.api("POST", `/v1/sessions/${fork}/send`, { text: "say hello" })).status).toBe(200);
    let seen: string[] = [];
    await until(() => {
      const last = world.mock
        .requests()
        .filter((r) => r.kind === "main" && r.prompt === "say hello")
        .at(-1);
      seen = last?.history ?? [];
      return last !== undefined;
    }, 60_000);
    // The model sees turn 1 and the new prompt; turns 2 and 3 are not in its context.
    expect(seen.filter((h) => TURNS.includes(h) || h === "say hello")).toEqual(["edit file", "say hello"]);
    // The folder was left as it was: only the conversation was rewound.
    expect(read(dir, "shell.txt")).toBe("made\n");
  }, 300_000);

  test("a folder that is no git repository: the same three turns, rewind and undo, no .git made", async () => {
    const dir = join(world.workDir, "plain");
    mkdirSync(dir);
    writeFileSync(join(dir, "mine.txt"), "mine\n");
    const { id, list } = await threeTurns(dir);
    expect(list.shadow).toBe(true);
    expectThreeTurns(list);
    await rewindAndUndo(id, dir);
    expect(read(dir, "mine.txt")).toBe("mine\n");
    expect(existsSync(join(dir, ".git"))).toBe(false);
  }, 240_000);

  test("the console: a turn's diff beside the messages, Rewind to here shows what it undoes before it rewinds, then Undo", async () => {
    const { id, dir } = repoSession;
    const page = await browser.newPage();
    const problems: string[] = [];
    page.on("pageerror", (e) => problems.push(e.message));
    page.on("console", (m) => m.type() === "error" && problems.push(m.text()));
    await page.goto(`http://127.0.0.1:${world.env.SVC_PORT}/dashboard/#/sessions/${id}`);
    const row = (turn: number) => `section.checkpoints tr[data-turn="${turn}"]`;
    await page.waitForSelector(row(3));
    expect(await page.$eval(row(3), (tr) => tr.textContent)).toContain("shell.txt");
    await page.click(`${row(3)} button:has-text("Diff")`);
    await page.waitForFunction(() =>
      document.querySelector("section.checkpoints pre.diff")?.textContent?.includes("+made"),
    );
    await page.click(`${row(1)} button:has-text("Rewind to here")`);
    await page.waitForSelector(".rewind-confirm");
    expect(await page.$eval(".rewind-confirm", (el) => el.textContent)).toContain("-made");
    // Nothing changed before the confirmation.
    expect(read(dir, "shell.txt")).toBe("made\n");
    await page.click('.rewind-confirm button:has-text("Rewind the folder to turn 1")');
    await page.waitForFunction(() =>
      document
        .querySelector("section.checkpoints [role=status]")
        ?.textContent?.includes("rewound the folder to turn 1"),
    );
    expect(existsSync(join(dir, "shell.txt"))).toBe(false);
    await page.click('section.checkpoints button:has-text("Undo the rewind to turn 1")');
    await page.waitForFunction(() =>
      document.querySelector("section.checkpoints [role=status]")?.textContent?.includes("undid the rewind"),
    );
    expect(read(dir, "shell.txt")).toBe("made\n");
    expect(problems).toEqual([]);
    await page.close();
  }, 60_000);
});
