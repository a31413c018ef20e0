import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { type Static, Type } from "@sinclair/typebox";
import type { AgentAdapter } from "../agents/agent.ts";
import type { AgentRegistry } from "../agents/registry.ts";
import { isVerified } from "../agents/versions.ts";
import type { PermissionMode } from "../config/schema.ts";
import type { SessionDrivers } from "../drivers/index.ts";
import type { UntrackedAgents as TerminalUntracked, UntrackedAgent } from "../drivers/tmux/untracked.ts";
import type { RunningProgram } from "../host/index.ts";
import type { Clock } from "../shared/clock.ts";
import { AgError } from "../shared/errors.ts";
import type { Logger } from "../shared/log.ts";
import { defaultName, newRecord, sessionDir, validateWorkDir } from "./lifecycle.ts";
import { type SessionRecord, type SessionRepo, toSession } from "./repo.ts";
import { Session } from "./session.ts";

export { UntrackedAgent } from "../drivers/tmux/untracked.ts";

export const AdoptUntrackedInput = Type.Object(
  {
    agent: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 64,
        description: "the agent that runs there, when ag cannot tell it from the pane's processes",
      }),
    ),
    workDir: Type.Optional(
      Type.String({ minLength: 1, maxLength: 4096, description: "default: the agent's working directory" }),
    ),
    name: Type.Optional(
      Type.String({ minLength: 1, maxLength: 200, description: "default: the workDir's name and the id" }),
    ),
  },
  { additionalProperties: false },
);
export type AdoptUntrackedInput = Static<typeof AdoptUntrackedInput>;

export const AdoptedUntracked = Type.Object({
  session: Session,
  warnings: Type.Array(Type.String()),
});

/** One process of the pane's tree as a program (the host domain reads them from /proc). */
export type PaneProgram = RunningProgram;

export interface UntrackedAgents extends TerminalUntracked {
  /** Gives one such agent a record again and follows it, as a session re-adopted at start. */
  adopt(sessionId: string, input: AdoptUntrackedInput): Promise<{ session: Session; warnings: string[] }>;
}

export interface UntrackedDeps {
  /** The terminal driver's listing and ending of agents without a record. */
  terminal: TerminalUntracked;
  repo: Pick<SessionRepo, "get" | "insert">;
  agents: Pick<AgentRegistry, "all" | "get" | "launchVersion">;
  drivers: Pick<SessionDrivers, "of">;
  /** The process and everything under it, as programs (host domain, /proc); none: not read. */
  programs?: (pid: number) => Promise<PaneProgram[]>;
  clock: Clock;
  logger: Pick<Logger, "info">;
  settings: { stateDir: string; permissionMode: PermissionMode; stallThresholdMs: number };
}

/**
 * Agents ag started whose record is gone (the state database lost, removed or replaced while
 * they ran), as the terminal driver lists and ends them (drivers/tmux/untracked.ts), and adopted
 * here: a terminal one's agent is told from the pane's processes, its workDir from the agent's
 * working directory, its hook secret from the session's folder (when the state directory kept
 * it); a record is made and its driver follows it as at a restart.
 */
export function createUntrackedAgents(deps: UntrackedDeps): UntrackedAgents {
  /** The untracked panes of one id; CONFLICT when it has a record, NOT_FOUND when there are none. */
  async function panesOf(sessionId: string): Promise<UntrackedAgent[]> {
    if (deps.repo.get(sessionId))
      throw new AgError("CONFLICT", `session ${sessionId} has a record: it is followed already`);
    const ours = (await deps.terminal.list()).filter((agent) => agent.sessionId === sessionId);
    if (ours.length === 0) throw new AgError("NOT_FOUND", `no untracked agent tagged ${sessionId}`);
    return ours;
  }

  /** Ids being adopted now: a second adoption of one waits for nothing, it is refused. */
  const adopting = new Set<string>();

  async function adopt(sessionId: string, input: AdoptUntrackedInput) {
    if (adopting.has(sessionId))
      throw new AgError("CONFLICT", `the agent tagged ${sessionId} is being adopted already`);
    adopting.add(sessionId);
    try {
      return await adoptNow(sessionId, input);
    } finally {
      adopting.delete(sessionId);
    }
  }

  async function adoptNow(sessionId: string, input: AdoptUntrackedInput) {
    const pane = (await panesOf(sessionId)).find((agent) => !agent.dead && agent.pid !== null);
    if (!pane)
      throw new AgError(
        "CONFLICT",
        `the agent tagged ${sessionId} has exited (its pane stays): there is nothing to adopt; end it with DELETE /v1/untracked/${sessionId}`,
      );
    const { record, warnings } = await recordOf(sessionId, pane, input);
    deps.repo.insert(record);
    await deps.drivers.of(record).adopt(record);
    deps.logger.info(`adopted untracked agent ${sessionId} (${record.agent} in ${record.workDir})`);
    return { session: toSession(deps.repo.get(sessionId) ?? record), warnings };
  }

  /** The record the agent's launch had, read back from its pane's processes and its folder. */
  async function recordOf(sessionId: string, pane: UntrackedAgent, input: AdoptUntrackedInput) {
    const programs = (await deps.programs?.(pane.pid!)) ?? [];
    const { agent, program } = agentOf(deps.agents, programs, input.agent, sessionId);
    const warnings: string[] = [];
    const workDir = validateWorkDir(input.workDir ?? program?.cwd ?? noWorkDir(sessionId));
    const agentVersion = await deps.agents.launchVersion(agent.name, {
      agentCommand: null,
      path: program?.path ?? undefined,
    });
    const record: SessionRecord = {
      ...newRecord({
        id: sessionId,
        name: input.name ?? defaultName(workDir, sessionId),
        workDir,
        agent: agent.name,
        agentCommand: null,
        permissionMode: launchedMode(program?.argv ?? [], agent, warnings, deps.settings.permissionMode),
        stallThresholdMs: deps.settings.stallThresholdMs,
        now: deps.clock.now(),
      }),
      agentVersion,
      verified: agentVersion === null ? null : isVerified(agent.verifiedVersions, agentVersion),
      windowId: pane.windowId,
      paneId: pane.paneId,
    };
    const folder = sessionDir(deps.settings.stateDir, sessionId);
    const secret = hookSecretOf(folder);
    if (secret) record.hookSecret = secret;
    else
      warnings.push(
        `the agent's hook secret is gone with ${folder}: its hooks cannot reach ag, its state is read from its screen and transcript`,
      );
    return { record, warnings };
  }

  return { list: deps.terminal.list, end: deps.terminal.end, adopt };
}

/**
 * Which agent runs in the pane: the one asked for (it must be among the pane's programs when
 * they can be read), else the first program of the tree that is a run of an agent's CLI.
 */
function agentOf(
  agents: UntrackedDeps["agents"],
  programs: readonly PaneProgram[],
  asked: string | undefined,
  sessionId: string,
): { agent: AgentAdapter; program: PaneProgram | null } {
  const runOf = (adapter: AgentAdapter) => programs.find((p) => adapter.isAgentProcess(p.argv)) ?? null;
  if (asked !== undefined) {
    const agent = agents.get(asked);
    return { agent, program: runOf(agent) ?? programs[0] ?? null };
  }
  for (const agent of agents.all()) {
    const program = runOf(agent);
    if (program) return { agent, program };
  }
  const runs = programs[0]?.argv.join(" ") || "nothing ag can read";
  throw new AgError(
    "CONFLICT",
    `no agent CLI ag knows runs in the pane tagged ${sessionId} (it runs: ${runs.slice(0, 200)}): name the agent with {"agent": …}, or end it with DELETE /v1/untracked/${sessionId}`,
  );
}

function noWorkDir(sessionId: string): never {
  throw new AgError(
    "CONFLICT",
    `the working directory of the agent tagged ${sessionId} cannot be read: give it as {"workDir": …}`,
  );
}

/**
 * The permission mode ag launched the agent with (its `--permission-mode` flag, which ag's
 * Claude Code launch passes); otherwise ag's default, said in a warning.
 */
function launchedMode(
  argv: readonly string[],
  agent: AgentAdapter,
  warnings: string[],
  fallback: PermissionMode,
): PermissionMode {
  const given = argv[argv.indexOf("--permission-mode") + 1];
  const mode = agent.permissionModes.find((m) => argv.includes("--permission-mode") && m === given);
  if (mode) return mode;
  warnings.push(`the agent's permission mode is not on its command line: recorded as ${fallback}`);
  return fallback;
}

/** The session folder's newest hook secret (each launch writes its own), or null. */
function hookSecretOf(dir: string): string | null {
  let names: string[];
  try {
    names = readdirSync(dir).filter((name) => name.startsWith("hook-secret-"));
  } catch {
    return null;
  }
  const newest = names
    .map((name) => ({ file: join(dir, name), at: statSync(join(dir, name)).mtimeMs }))
    .sort((a, b) => b.at - a.at)[0];
  return newest ? readFileSync(newest.file, "utf8").trim() : null;
}
