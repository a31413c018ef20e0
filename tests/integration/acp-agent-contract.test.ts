import { join } from "node:path";
import { acpAgentContract } from "../contract/acp-agent.contract.ts";
import { tempDir } from "../helpers/temp.ts";

// The fake ACP agent the integration tests run ag's headless sessions on holds to the protocol as
// the SDK's client side sends and reads it (tests/contract/acp-agent.contract.ts); a real agent
// is held to the same contract in tests/e2e/acp-agent-contract.test.ts.
const FAKE = join(import.meta.dir, "..", "fakes", "acp-agent.ts");

acpAgentContract({
  name: "the fake ACP agent (tests/fakes/acp-agent.ts)",
  start: async () => ({
    command: [process.execPath, FAKE, "--state", tempDir("ag-acp-contract-")],
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: tempDir() },
    cwd: tempDir("ag-acp-contract-work-"),
  }),
  hello: { prompt: "say hello", reply: "Hello from the fake agent!" },
  permission: "write file contract.txt",
  slow: "slow",
  turnMs: 20_000,
});
