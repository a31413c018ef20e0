/**
 * The compatibility matrix: installs the newest version the registry serves of every agent CLI
 * (scripts/agent-tools.ts), prints agent × pinned × newest, and runs the e2e contract
 * (tests/e2e/agent-contract.test.ts) on them. Only an agent whose newest is none of its pins gets
 * a newest run. Ends with bun's summary; exits with bun's code.
 *
 *   bun scripts/agent-matrix.ts                the pins and the newest versions (npm run test:matrix)
 *   bun scripts/agent-matrix.ts --newest-only  the newest versions alone (.ci/run: npm test ran the pins)
 */
import { agentVersions } from "../tests/helpers/agent-versions.ts";
import { agentPackages, installNewest, installPins, REPO } from "./agent-tools.ts";

const newestOnly = process.argv.includes("--newest-only");

installPins();
const newest = new Map(installNewest().map((found) => [found.package, found]));

const rows = Object.entries(agentPackages()).map(([agent, name]) => {
  const found = newest.get(name);
  const pinned = found?.pins.join(", ") || "—";
  const latest = !found ? "—" : found.dir ? `${found.newest} (runs)` : `${found.newest} (pinned)`;
  return [agent, name, pinned, latest];
});
printTable([["agent", "package", "pinned", "newest"], ...rows]);

const mode = newestOnly ? "newest-only" : "newest";
const versions = agentVersions(mode);
if (versions.length === 0) {
  console.log("\nevery agent's newest version is one of its pins: nothing more to run");
  process.exit(0);
}
console.log(`\nthe contract on: ${versions.map((v) => `${v.agent} ${v.version}`).join(", ")}\n`);
const run = Bun.spawnSync(
  [process.execPath, "test", "--timeout", "30000", "tests/e2e/agent-contract.test.ts"],
  { cwd: REPO, env: { ...process.env, AG_AGENT_MATRIX: mode }, stdio: ["ignore", "inherit", "inherit"] },
);
process.exit(run.exitCode ?? 1);

function printTable(table: string[][]): void {
  const widths = table[0]!.map((_, column) => Math.max(...table.map((row) => row[column]!.length)));
  for (const row of table) console.log(row.map((cell, column) => cell.padEnd(widths[column]!)).join("  "));
}
