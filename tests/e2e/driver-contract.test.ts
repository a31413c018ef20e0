import { afterAll, beforeAll } from "bun:test";
import { driverContract } from "../contract/driver.contract.ts";
import { type AgentWorld, startAgentWorld } from "../helpers/agent-world.ts";

/**
 * The driver contract (tests/contract/driver.contract.ts) with real agents, through the compiled
 * ag against the mock model: on tmux with Claude Code, on acp with OpenCode (`opencode acp`).
 * tests/integration/driver-contract.test.ts runs it on acp with the fake ACP agent.
 */
let world: AgentWorld;

beforeAll(async () => {
  world = await startAgentWorld({}, { agents: ["claude", "opencode"] });
}, 120_000);
afterAll(async () => {
  await world?.stop();
});

/** The mock was asked `prompt` (a slow turn is under way). */
const asked = (prompt: string) => async () => world.prompts().includes(prompt);
const common = {
  api: (method: string, path: string, body?: unknown) => world.api(method, path, body),
  hello: { prompt: "say hello", reply: "Hello from the mock model!" },
  permission: (name: string) => `run cmd: touch ${name}`,
  turnMs: 90_000,
};

driverContract({
  ...common,
  name: "Claude Code",
  driver: "tmux",
  get workDir() {
    return world.workDir;
  },
  session: { agent: "claude" },
  slow: "slow 20",
  underWay: asked("slow 20"),
});

driverContract({
  ...common,
  name: "OpenCode",
  driver: "acp",
  get workDir() {
    return world.workDir;
  },
  session: { agent: "opencode", driver: "acp" },
  slow: "slow 21",
  underWay: asked("slow 21"),
});
