import { expect, test } from "bun:test";
import type { AgentAdapter } from "../../src/agents/agent.ts";
import { createAgents } from "../../src/agents/index.ts";
import { claudeContracts } from "../fixtures/agents/claude/contract.ts";
import { codexContracts } from "../fixtures/agents/codex/contract.ts";
import { geminiContract } from "../fixtures/agents/gemini/contract.ts";
import { opencodeContract } from "../fixtures/agents/opencode/contract.ts";
import { tempDir } from "../helpers/temp.ts";
import { type AdapterContract, adapterContract } from "./agent-adapter.contract.ts";

/**
 * Every registered adapter against what its CLI really produced (agent-adapter.contract.ts), one
 * description per captured version.
 */
const CONTRACTS: Record<string, (adapter: AgentAdapter) => AdapterContract | AdapterContract[]> = {
  claude: claudeContracts,
  codex: codexContracts,
  gemini: geminiContract,
  opencode: opencodeContract,
};

const agents = createAgents(
  {
    home: tempDir("ag-contract-home-"),
    dataDir: null,
    trustWorkdir: false,
    selfCommand: ["ag"],
    isRoot: false,
  },
  { probe: async () => null },
);

test("every registered agent has a contract description with captured fixtures", () => {
  expect(
    agents
      .all()
      .map((a) => a.name)
      .sort(),
  ).toEqual(Object.keys(CONTRACTS).sort());
});

for (const adapter of agents.all()) {
  const contract = CONTRACTS[adapter.name];
  if (contract) for (const c of [contract(adapter)].flat()) adapterContract(c);
}
