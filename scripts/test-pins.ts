/**
 * npm test's last part: each agent's own e2e files (AGENT_E2E) again on every extra pin of
 * package.json's `agentVersions` (Claude Code 2.1.328 beside the devDependency's 2.1.197), as
 * npm test runs e2e files (scripts/e2e-plan.ts), each run ending with bun's summary. The e2e phase
 * before it ran the whole suite on the primary pins and the contract (agent-contract.test.ts) on
 * every pin.
 *
 *   bun scripts/test-pins.ts          exits non-zero when any run failed
 */
import { AGENT_E2E, agentVersions } from "../tests/helpers/agent-versions.ts";
import { runE2e, withBinary } from "./e2e-plan.ts";

/** Runs every extra pin's e2e files; whether all passed. */
export function runPins(): boolean {
  let passed = true;
  for (const pin of agentVersions("pins").filter((v) => v.kind === "extra")) {
    const e2e = AGENT_E2E[pin.agent];
    if (!e2e)
      throw new Error(
        `${pin.agent} ${pin.version} is pinned, but no e2e files are listed for it (AGENT_E2E)`,
      );
    const program = pin.binaries()[e2e.program];
    if (!program) throw new Error(`${pin.agent} ${pin.version}: no ${e2e.program} installed`);
    console.log(
      `\n== ${pin.agent} ${pin.version}: ${e2e.files.length} e2e files (${e2e.variable}=${program})\n`,
    );
    if (!runE2e(e2e.files, { [e2e.variable]: program })) passed = false;
  }
  return passed;
}

if (import.meta.main) process.exit(withBinary(runPins) ? 0 : 1);
