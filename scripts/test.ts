/**
 * `npm test`'s tests, after its preflight, typecheck and lint: each phase runs whatever the
 * phases before it found (a failed unit test does not hide an e2e or a pinned version's result),
 * each ends with bun's own summary, and the exit status is non-zero when any phase failed.
 *
 *   1. unit, contract and integration files, in parallel (a worker per core);
 *   2. e2e files, one at a time (real agents: ~13 % of a core and 200–300 MB each);
 *   3. each agent's own e2e files again on its further pins (scripts/test-pins.ts).
 */
import { resolve } from "node:path";

const REPO = resolve(import.meta.dir, "..");
const bun = process.execPath;
const phases: Array<{ name: string; argv: string[] }> = [
  {
    name: "unit, contract and integration",
    argv: [
      bun,
      "test",
      "--timeout",
      "30000",
      "--parallel",
      "tests/unit",
      "tests/contract",
      "tests/integration",
    ],
  },
  { name: "e2e", argv: [bun, "test", "--timeout", "30000", "tests/e2e"] },
  { name: "e2e on the further pinned versions", argv: [bun, "run", "scripts/test-pins.ts"] },
];

const failed: string[] = [];
for (const phase of phases) {
  console.log(`\n== npm test: ${phase.name}\n`);
  const run = Bun.spawnSync(phase.argv, { cwd: REPO, stdio: ["ignore", "inherit", "inherit"] });
  if (run.exitCode !== 0) failed.push(phase.name);
}
if (failed.length) console.error(`\nnpm test: failed in ${failed.join("; ")}`);
process.exit(failed.length ? 1 : 0);
