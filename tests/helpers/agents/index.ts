import { codexSeed } from "./codex.ts";
import { geminiSeed } from "./gemini.ts";
import { opencodeSeed } from "./opencode.ts";

/**
 * What a real-agent test world needs of each agent CLI beside Claude Code (agent-home.ts): its
 * program on PATH and a home that points it at the mock model. One entry per agent, in its own
 * file beside this one. No bun:test import here (scripts use the world too).
 */
export interface AgentSeed {
  /**
   * Program name → the installed binary, linked into the world's bin: the pinned one (from
   * node_modules or .tools/), or the one installed in `modules`, another version's node_modules
   * (tests/helpers/agent-versions.ts).
   */
  binaries(modules?: string): Record<string, string>;
  /**
   * Writes the agent's own config under `home` so that it starts straight at its prompt, talks
   * to the mock at `mockUrl` and sends nothing anywhere else; returns the environment it needs.
   */
  seed(home: string, mockUrl: string): Record<string, string>;
}

export const AGENT_SEEDS: Record<string, AgentSeed> = {
  codex: codexSeed,
  gemini: geminiSeed,
  opencode: opencodeSeed,
};
