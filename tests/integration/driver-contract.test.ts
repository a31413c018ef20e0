import { afterAll, beforeAll } from "bun:test";
import { join } from "node:path";
import { driverContract } from "../contract/driver.contract.ts";
import { callApi, startTestRuntime } from "../helpers/runtime.ts";
import { tempDir } from "../helpers/temp.ts";

/**
 * The driver contract (tests/contract/driver.contract.ts) on acp with the fake ACP agent
 * (tests/fakes/acp-agent.ts, run by the Gemini adapter's ACP entry in place of `gemini`), through
 * ag's real runtime. tests/e2e/driver-contract.test.ts runs it on tmux and acp with real agents.
 */
const FAKE = join(import.meta.dir, "..", "fakes", "acp-agent.ts");
let ag: Awaited<ReturnType<typeof startTestRuntime>>;

beforeAll(async () => {
  ag = await startTestRuntime({}, { home: tempDir("ag-contract-home-") });
});
afterAll(async () => {
  await ag?.drain(100);
  ag?.close();
});

driverContract({
  name: "the fake ACP agent",
  driver: "acp",
  api: (method, path, body) => callApi(ag, method, path, body),
  workDir: tempDir("ag-contract-work-"),
  session: {
    agent: "gemini",
    driver: "acp",
    agentCommand: [process.execPath, FAKE, "--state", tempDir("ag-contract-fake-")].join(" "),
  },
  hello: { prompt: "say hello", reply: "Hello from the fake agent!" },
  permission: (name) => `write file ${name}`,
  slow: "slow",
  turnMs: 15_000,
});
