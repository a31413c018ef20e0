import type { RunAs } from "../shared/run-as.ts";
import type { AgentAdapter, AgentEnvironment } from "./agent.ts";
import { createClaudeAdapter } from "./claude/adapter.ts";
import { createCodexAdapter } from "./codex/adapter.ts";
import { createGeminiAdapter } from "./gemini/adapter.ts";
import { createOpenCodeAdapter } from "./opencode/adapter.ts";
import { type AgentRegistry, createAgentRegistry } from "./registry.ts";

/**
 * The agents ag can run, one line each: a new adapter is its folder under agents/, one line
 * here, and its fixtures under tests/fixtures/agents/<name>/ (docs/agents.md).
 */
const ADAPTERS: ReadonlyArray<(env: AgentEnvironment) => AgentAdapter> = [
  createClaudeAdapter,
  createCodexAdapter,
  createGeminiAdapter,
  createOpenCodeAdapter,
];

export function createAgents(
  env: AgentEnvironment,
  options: Parameters<typeof createAgentRegistry>[1],
): AgentRegistry {
  return createAgentRegistry(
    ADAPTERS.map((create) => create(env)),
    { ...options, forOwner: (owner) => ADAPTERS.map((create) => create(ownerEnvironment(env, owner))) },
  );
}

/**
 * The environment of agents run as another OS user (runAs): that user's HOME, where its CLIs keep
 * their config and transcripts; not ag's AGENT_DATA_DIR (ag's, shared by every tenant); not root.
 * ag (root) writes nothing into a folder that user owns — a link it planted could turn the write
 * onto any file — so the folder-trust question is not pre-accepted: the user's own config trusts
 * the tenant's root, or the session shows it as a `trust` permission (docs/security.md).
 */
export function ownerEnvironment(env: AgentEnvironment, owner: RunAs): AgentEnvironment {
  return { ...env, home: owner.home, dataDir: null, trustWorkdir: false, isRoot: false };
}

export type { AgentAdapter, AgentCapability, AgentEnvironment, DriverName } from "./agent.ts";
export { AGENT_CAPABILITIES } from "./agent.ts";
export { AgentInfo } from "./info.ts";
export type { AgentProbe } from "./probe.ts";
export { unverifiedWarning } from "./probe.ts";
export type { AgentRegistry, HelpProbe, VersionProbe } from "./registry.ts";
export { createAgentRegistry } from "./registry.ts";
export { type TaskItem, taskListOf } from "./tasks.ts";

/** The adapters as facts about their CLIs (names, packages), for `ag doctor` without a server. */
export function agentAdapters(): readonly AgentAdapter[] {
  const env: AgentEnvironment = {
    home: "",
    dataDir: null,
    trustWorkdir: false,
    selfCommand: [],
    isRoot: false,
  };
  return ADAPTERS.map((create) => create(env));
}
