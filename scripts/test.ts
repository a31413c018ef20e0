/**
 * `npm test`'s tests, after its preflight, typecheck and lint: each phase runs whatever the
 * phases before it found (a failed unit test does not hide an e2e or a pinned version's result),
 * each run ends with bun's own summary, and the exit status is non-zero when any phase failed.
 * The binary is built once for all of them (scripts/e2e-plan.ts `withBinary`).
 *
 *   1. unit, contract and integration files, three at a time (UNIT_WORKERS), the slowest first;
 *   2. e2e files, two at a time, then the ones that load the machine on purpose alone
 *      (scripts/e2e-plan.ts; real agents: ~13 % of a core and 200–300 MB each);
 *   3. each agent's own e2e files again on its further pins (scripts/test-pins.ts).
 */
import { e2eFiles, REPO, runE2e, TIMINGS, withBinary } from "./e2e-plan.ts";
import { runPins } from "./test-pins.ts";

const bun = process.execPath;

/**
 * Workers for unit, contract and integration: one more than the 2 cores, as much of those layers
 * waits on real timeouts, processes and sockets (194 s with 2, 131 s with 3 on a fresh clone with a
 * core kept busy, all passing; docs/testing.md).
 */
const UNIT_WORKERS = 3;

function unitToIntegration(): boolean {
  const layers = ["tests/unit", "tests/contract", "tests/integration"];
  const argv = [
    bun,
    "test",
    "--timeout",
    "30000",
    `--parallel=${UNIT_WORKERS}`,
    `--timings=${TIMINGS}`,
    ...layers,
  ];
  const run = Bun.spawnSync(argv, { cwd: REPO, stdio: ["ignore", "inherit", "inherit"] });
  return run.exitCode === 0;
}

const phases: Array<{ name: string; run: () => boolean }> = [
  { name: "unit, contract and integration", run: unitToIntegration },
  { name: "e2e", run: () => runE2e(e2eFiles()) },
  { name: "e2e on the further pinned versions", run: runPins },
];

const failed = withBinary(() =>
  phases.flatMap((phase) => {
    console.log(`\n== npm test: ${phase.name}\n`);
    return phase.run() ? [] : [phase.name];
  }),
);
if (failed.length) console.error(`\nnpm test: failed in ${failed.join("; ")}`);
process.exit(failed.length ? 1 : 0);
