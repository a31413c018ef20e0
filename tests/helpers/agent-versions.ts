import { existsSync, statSync } from "node:fs";
import { join } from "node:path";
import {
  agentPackages,
  extraPins,
  installedNewest,
  NEWEST_DIR,
  pinnedTools,
  primaryPins,
  versionDir,
} from "../../scripts/agent-tools.ts";
import { claudeBinary, claudeBinaryIn } from "./agent-home.ts";
import { AGENT_SEEDS } from "./agents/index.ts";

/**
 * The agent CLI versions under test, each with its binaries (program name → path) for a test
 * world (`startAgentWorld(env, {binaries})`):
 *
 * - `pin`: the primary pin (the devDependency, or the `agentTools` entry), what every other test
 *   drives;
 * - `extra`: the further pins of package.json's `agentVersions`, verified too (always: npm test's
 *   preflight installs them);
 * - `newest`: the newest the registry served when scripts/agent-matrix.ts last installed it,
 *   when it is none of the pins, only with `AG_AGENT_MATRIX=newest` (pins and newest) or
 *   `AG_AGENT_MATRIX=newest-only`.
 *
 * No bun:test import here (scripts/agent-matrix.ts uses it).
 */
export interface AgentVersion {
  agent: string;
  package: string;
  version: string;
  kind: "pin" | "extra" | "newest";
  /** Program name → binary; throws when that version is not installed (with the command that installs it). */
  binaries(): Record<string, string>;
}

export type MatrixMode = "pins" | "newest" | "newest-only";

export function matrixMode(env: Record<string, string | undefined> = process.env): MatrixMode {
  const mode = env.AG_AGENT_MATRIX ?? "";
  if (mode === "" || mode === "pins") return "pins";
  if (mode === "newest" || mode === "newest-only") return mode;
  throw new Error(`AG_AGENT_MATRIX=${mode}: expected pins, newest or newest-only`);
}

/** Every (agent, version) under test, agent by agent, in the order pin, extras, newest. */
export function agentVersions(mode: MatrixMode = matrixMode()): AgentVersion[] {
  const primary = primaryPins();
  const extras = extraPins();
  const newest = mode === "pins" ? {} : installedNewest();
  return Object.entries(agentPackages()).flatMap(([agent, name]) => {
    const entry = (version: string, kind: AgentVersion["kind"], modules?: string): AgentVersion => ({
      agent,
      package: name,
      version,
      kind,
      binaries: () => agentBinaries(agent, modules),
    });
    const list: AgentVersion[] = [];
    if (mode !== "newest-only") {
      if (primary[name]) list.push(entry(primary[name], "pin"));
      for (const version of extras[name] ?? [])
        list.push(entry(version, "extra", join(versionDir(name, version), "node_modules")));
    }
    const latest = newest[name];
    if (latest)
      list.push(entry(latest, "newest", join(versionDir(name, latest, NEWEST_DIR), "node_modules")));
    return list;
  });
}

/**
 * An agent's programs: the pinned ones (no `modules`), or those installed in `modules`; throws,
 * naming the agent and the command that installs it, when one is not there. A test world asks
 * only for the agents it drives (tests/helpers/agent-world.ts).
 */
export function agentBinaries(agent: string, modules?: string): Record<string, string> {
  let binaries: Record<string, string>;
  try {
    binaries = installedBinaries(agent, modules);
  } catch (error) {
    throw missingAgent(agent, (error as Error).message, modules);
  }
  for (const path of Object.values(binaries)) {
    if (!existsSync(path) || statSync(path).size === 0)
      throw missingAgent(agent, `${path} is missing`, modules);
  }
  return binaries;
}

/** An agent a test needs, not installed: its package and the command that installs it. */
function missingAgent(agent: string, what: string, modules?: string): Error {
  const name = agentPackages()[agent] ?? agent;
  const install =
    modules !== undefined
      ? "bun scripts/agent-tools.ts (--newest for the newest versions)"
      : pinnedTools()[name]
        ? "bun scripts/agent-tools.ts (npm test's preflight runs it)"
        : "npm ci";
  return new Error(
    `this test drives ${agent} (${name}), which is not installed: ${what}. Install it: ${install}`,
  );
}

function installedBinaries(agent: string, modules?: string): Record<string, string> {
  if (modules !== undefined && !existsSync(modules)) throw new Error(`${modules} is missing`);
  if (agent === "claude") {
    const path = modules === undefined ? claudeBinary() : claudeBinaryIn(modules);
    if (!path) throw new Error(`no native Claude Code binary under ${modules}`);
    return { claude: path };
  }
  const seed = AGENT_SEEDS[agent];
  if (!seed) throw new Error(`no test seed for agent ${agent} (tests/helpers/agents/)`);
  return seed.binaries(modules);
}

/**
 * Each agent's own e2e files: what npm test runs again on each of the agent's extra pins
 * (scripts/test-pins.ts), and the variable that points them at that pin's program. The contract
 * (agent-contract.test.ts) runs every pin already and is not repeated.
 */
export const AGENT_E2E: Record<string, { program: string; variable: string; files: string[] }> = {
  claude: {
    program: "claude",
    variable: "CLAUDE_BIN",
    files: [
      "agent-smoke",
      "sessions",
      "session-answers",
      "dialog-keys",
      "trust",
      "orchestration",
      "cli",
      "acp-claude",
    ].map((name) => `tests/e2e/${name}.test.ts`),
  },
  codex: {
    program: "codex",
    variable: "CODEX_BIN",
    files: ["tests/e2e/codex.test.ts", "tests/e2e/codex-conversations.test.ts"],
  },
};
