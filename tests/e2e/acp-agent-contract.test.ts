import { join } from "node:path";
import { opencodeAcp } from "../../src/agents/opencode/acp.ts";
import { acpAgentContract } from "../contract/acp-agent.contract.ts";
import { prepareAgentWorld } from "../helpers/agent-world.ts";

// A real ACP agent held to the contract the fake one is held to (tests/contract/acp-agent.contract.ts,
// tests/integration/acp-agent-contract.test.ts): OpenCode's `opencode acp` as ag starts it (its
// ACP entry's command and environment), against the mock model.
let stopMock: (() => Promise<void>) | undefined;

acpAgentContract({
  name: "OpenCode (opencode acp)",
  async start() {
    const world = await prepareAgentWorld({}, { agents: ["opencode"] });
    stopMock = () => world.mock.stop();
    const plan = await opencodeAcp.prepare({
      sessionId: "acp-contract",
      workDir: world.workDir,
      permissionMode: "default",
      agentCommand: null,
      sessionDir: join(world.root, "session"),
      hookUrl: "http://127.0.0.1:9/v1/hooks/opencode",
      hookSecret: "unused",
      env: {},
    });
    return { command: plan.command, env: { ...world.env, ...plan.env }, cwd: world.workDir };
  },
  hello: { prompt: "say hello", reply: "Hello from the mock model!" },
  permission: "run cmd: touch contract.txt",
  slow: "slow 20",
  stop: async () => stopMock?.(),
  turnMs: 90_000,
});
