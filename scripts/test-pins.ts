/**
 * npm test's second part: each agent's own e2e files (AGENT_E2E) again on every extra pin of
 * package.json's `agentVersions` (Claude Code 2.1.328 beside the devDependency's 2.1.197), one
 * `bun test` run per pin, each ending with bun's summary. The first part (`bun test`) ran the
 * whole suite on the primary pins and the contract (agent-contract.test.ts) on every pin.
 *
 *   bun scripts/test-pins.ts          exits non-zero when any run failed
 */
import { AGENT_E2E, agentVersions } from "../tests/helpers/agent-versions.ts";
import { REPO } from "./agent-tools.ts";

let failed = false;
for (const pin of agentVersions("pins").filter((v) => v.kind === "extra")) {
  const e2e = AGENT_E2E[pin.agent];
  if (!e2e)
    throw new Error(`${pin.agent} ${pin.version} is pinned, but no e2e files are listed for it (AGENT_E2E)`);
  const program = pin.binaries()[e2e.program];
  if (!program) throw new Error(`${pin.agent} ${pin.version}: no ${e2e.program} installed`);
  console.log(
    `\n== ${pin.agent} ${pin.version}: ${e2e.files.length} e2e files (${e2e.variable}=${program})\n`,
  );
  const run = Bun.spawnSync([process.execPath, "test", "--timeout", "30000", ...e2e.files], {
    cwd: REPO,
    env: { ...process.env, [e2e.variable]: program },
    stdio: ["ignore", "inherit", "inherit"],
  });
  if (run.exitCode !== 0) failed = true;
}
process.exit(failed ? 1 : 0);
