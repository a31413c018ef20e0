/**
 * The cost of a checkpoint (src/checkpoints) on a large folder: a git repository of FILES files
 * and about SIZE_MB MB (a committed project, as a user's is), and the same folder without git
 * (the shadow repository). For each:
 * - the first checkpoint (every file hashed into the session's index once);
 * - a turn that changes CHANGED files: the checkpoint before it and the one at its end (what a
 *   session pays per turn), over TURNS turns: median and worst, and the disk the objects grew;
 * - a turn that changes nothing (same tree: no commit);
 * - a code rewind of one turn and its undo;
 * - as a yardstick taken at the same moments, one `git status` of the repository (the machine
 *   may be busy: compare the two, not the numbers with another machine's).
 *
 *   bun bench/checkpoints.ts [files=10000] [sizeMb=200] [turns=10] [changed=3]
 */
import { mkdirSync, readdirSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createCheckpointRepo, createCheckpointService } from "../src/checkpoints/index.ts";
import { systemClock } from "../src/shared/clock.ts";
import { createLogger } from "../src/shared/log.ts";
import { openDatabase } from "../src/store/db.ts";
import { runCleanups } from "../tests/helpers/cleanup.ts";
import { git } from "../tests/helpers/git.ts";
import { tempDir } from "../tests/helpers/temp.ts";

const FILES = Number(process.argv[2] ?? 10_000);
const SIZE_MB = Number(process.argv[3] ?? 200);
const TURNS = Number(process.argv[4] ?? 10);
const CHANGED = Number(process.argv[5] ?? 3);
const MB = 1024 * 1024;

/** FILES files in 100 folders, SIZE_MB in all; random bytes as text (nothing compresses away). */
function makeProject(dir: string): void {
  const perFile = Math.floor((SIZE_MB * MB) / FILES);
  for (let i = 0; i < FILES; i++) {
    const folder = join(dir, `pkg${i % 100}`);
    if (i < 100) mkdirSync(folder, { recursive: true });
    const bytes = Buffer.from(crypto.getRandomValues(new Uint8Array(Math.ceil(perFile / 2))));
    writeFileSync(
      join(folder, `file${i}.txt`),
      `${bytes
        .toString("hex")
        .match(/.{1,80}/g)!
        .join("\n")}\n`,
    );
  }
}

function duBytes(path: string): number {
  let total = 0;
  for (const entry of readdirSync(path, { withFileTypes: true, recursive: true })) {
    if (entry.isFile()) total += statSync(join(entry.parentPath, entry.name)).size;
  }
  return total;
}

function gitStatusMs(dir: string): number {
  const started = performance.now();
  Bun.spawnSync(["git", "status", "--porcelain"], {
    cwd: dir,
    env: { ...process.env, GIT_OPTIONAL_LOCKS: "0" },
  });
  return ms(started);
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
const ms = (started: number) => Math.round(performance.now() - started);

async function measure(kind: "git" | "plain"): Promise<void> {
  const dir = tempDir(`ag-bench-${kind}-`);
  const state = tempDir("ag-bench-state-");
  makeProject(dir);
  if (kind === "git") {
    git(dir, "init", "-q");
    git(dir, "-c", "user.email=b@example.com", "-c", "user.name=b", "add", ".");
    git(dir, "-c", "user.email=b@example.com", "-c", "user.name=b", "commit", "-q", "-m", "project");
  }
  const service = createCheckpointService({
    repo: createCheckpointRepo(openDatabase(join(state, "state.db"))),
    root: join(state, "checkpoints"),
    clock: systemClock,
    logger: createLogger({ level: "silent", json: false }),
    settings: { maxFileBytes: 10 * MB, keepTurns: 0, keepDays: 0 },
  });
  const objects = kind === "git" ? join(dir, ".git", "objects") : join(state, "checkpoints", "shadow");

  let started = performance.now();
  await service.beforePrompt("s", dir, "first");
  const first = ms(started);
  await service.turnEnded("s", dir);
  const diskBefore = duBytes(objects);

  const befores: number[] = [];
  const ends: number[] = [];
  const statuses: number[] = [];
  for (let turn = 0; turn < TURNS; turn++) {
    // The yardstick at the same moment (the machine may be busy): one `git status` of the folder.
    if (kind === "git") statuses.push(gitStatusMs(dir));
    started = performance.now();
    await service.beforePrompt("s", dir, `turn ${turn}`);
    befores.push(ms(started));
    for (let c = 0; c < CHANGED; c++) {
      const i = (turn * CHANGED + c) % FILES;
      writeFileSync(join(dir, `pkg${i % 100}`, `file${i}.txt`), `changed at turn ${turn}\n`);
    }
    started = performance.now();
    await service.turnEnded("s", dir);
    ends.push(ms(started));
  }
  const diskPerTurn = (duBytes(objects) - diskBefore) / TURNS;

  started = performance.now();
  await service.beforePrompt("s", dir, "nothing");
  await service.turnEnded("s", dir);
  const unchanged = ms(started);

  const list = await service.list("s", dir);
  const back = list.checkpoints.at(-2)!.turn;
  started = performance.now();
  await service.rewind("s", dir, back);
  const rewind = ms(started);
  started = performance.now();
  await service.undo("s", dir);
  const undo = ms(started);

  const perTurn = befores.map((b, i) => b + ends[i]!);
  console.log(
    JSON.stringify({
      kind,
      files: FILES,
      sizeMb: SIZE_MB,
      changedPerTurn: CHANGED,
      firstCheckpointMs: first,
      beforePromptMs: { median: median(befores), max: Math.max(...befores) },
      turnEndMs: { median: median(ends), max: Math.max(...ends) },
      perTurnMs: { median: median(perTurn), max: Math.max(...perTurn) },
      unchangedTurnMs: unchanged,
      ...(statuses.length ? { gitStatusMs: { median: median(statuses), max: Math.max(...statuses) } } : {}),
      diskPerTurnKb: Math.round(diskPerTurn / 1024),
      rewindMs: rewind,
      undoMs: undo,
    }),
  );
}

try {
  await measure("git");
  await measure("plain");
} finally {
  await runCleanups();
}
