/**
 * How npm test runs e2e files: two at a time, beside each other, except the files that load the
 * machine on purpose (they start busy loops through tests/helpers/load.ts, directly or through a
 * helper such as the tmux and ACP scenarios), which run one after another, alone: a file beside
 * them would be starved of the cores its timings assume, and they would not measure what they say.
 *
 * Which file loads the machine is read from its imports (followed through tests/helpers), never
 * from a list to keep up to date. The binary the test files drive is built once for the whole run
 * (withBinary) and handed to each test process in AG_TEST_BINARY.
 *
 *   bun scripts/e2e-plan.ts         prints which files run beside each other and which alone
 *   bun scripts/e2e-plan.ts --run   runs the e2e layer as npm test does (npm run test:e2e)
 */
import { existsSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { buildBinary } from "../tests/helpers/build-binary.ts";
import { REPO } from "./agent-tools.ts";

export { REPO };

const LOAD_HELPER = join(REPO, "tests", "helpers", "load.ts");
/** Files beside each other: the machine has 2 cores, and each file drives real agent CLIs. */
export const E2E_WORKERS = 2;
/** Per-file durations measured in a loaded run (every layer): --parallel starts the slowest files first. */
export const TIMINGS = "tests/timings.json";

/** The e2e files, repository-relative, in name order. */
export function e2eFiles(): string[] {
  return readdirSync(join(REPO, "tests", "e2e"))
    .filter((name) => name.endsWith(".test.ts"))
    .sort()
    .map((name) => `tests/e2e/${name}`);
}

/** The relative modules a source file imports (static, dynamic and re-exports). */
function localImports(file: string): string[] {
  const text = readFileSync(file, "utf8");
  const specifiers = [...text.matchAll(/(?:from|import)\s*\(?\s*["'](\.{1,2}\/[^"']+)["']/g)].map(
    (m) => m[1]!,
  );
  return specifiers.map((spec) => resolve(dirname(file), spec)).filter((path) => existsSync(path));
}

/** Whether `file` reaches tests/helpers/load.ts through its imports. */
export function loadsTheMachine(file: string, seen = new Set<string>()): boolean {
  const path = resolve(REPO, file);
  if (path === LOAD_HELPER) return true;
  if (seen.has(path)) return false;
  seen.add(path);
  return localImports(path).some((next) => loadsTheMachine(next, seen));
}

/** `files` split into those run beside each other and those run alone (both in the given order). */
export function e2eSchedule(files: string[]): { beside: string[]; alone: string[] } {
  const alone = files.filter((file) => loadsTheMachine(file));
  return { beside: files.filter((file) => !alone.includes(file)), alone };
}

/** The `bun test` runs for `files`: the ones beside each other first, then each loading one alone. */
export function e2eRuns(files: string[]): string[][] {
  const { beside, alone } = e2eSchedule(files);
  const base = [process.execPath, "test", "--timeout", "30000"];
  const runs: string[][] = [];
  if (beside.length) runs.push([...base, `--parallel=${E2E_WORKERS}`, `--timings=${TIMINGS}`, ...beside]);
  if (alone.length) runs.push([...base, ...alone]);
  return runs;
}

/** Runs `files` as e2e (e2eRuns) with `env` added; each run ends with bun's summary. Whether all passed. */
export function runE2e(files: string[], env: Record<string, string> = {}): boolean {
  let passed = true;
  for (const argv of e2eRuns(files)) {
    const run = Bun.spawnSync(argv, {
      cwd: REPO,
      env: { ...process.env, ...env },
      stdio: ["ignore", "inherit", "inherit"],
    });
    if (run.exitCode !== 0) passed = false;
  }
  return passed;
}

/**
 * Runs `work` with the binary built once and named in AG_TEST_BINARY for every test process it
 * starts (tests/helpers/binary.ts `compiledBinary`), unless the caller already set one; removes it after.
 */
export function withBinary<T>(work: () => T): T {
  if (process.env.AG_TEST_BINARY) return work();
  const binary = buildBinary();
  process.env.AG_TEST_BINARY = binary.path;
  try {
    return work();
  } finally {
    delete process.env.AG_TEST_BINARY;
    rmSync(binary.dir, { recursive: true, force: true });
  }
}

if (import.meta.main) {
  if (process.argv.includes("--run")) process.exit(withBinary(() => runE2e(e2eFiles())) ? 0 : 1);
  const { beside, alone } = e2eSchedule(e2eFiles());
  const show = (list: string[]) => list.map((file) => `  ${relative("tests/e2e", file)}`).join("\n");
  console.log(`beside each other (${E2E_WORKERS} at a time):\n${show(beside)}\nalone:\n${show(alone)}`);
}
