import type { LaunchPlan } from "../agents/agent.ts";
import type { AgentRegistry } from "../agents/registry.ts";
import type { DiagnosticsSink } from "../diagnostics/index.ts";
import type { AcpDriver } from "../drivers/acp/index.ts";
import type { SessionLaunch } from "../events/names.ts";
import { AgError } from "../shared/errors.ts";
import type { Tmux } from "../tmux/tmux.ts";
import { acpOf, headlessSpec, isHeadless, sinkOf } from "./headless.ts";
import { sessionDir } from "./lifecycle.ts";
import type { LiveSessions } from "./live/registry.ts";
import type { LiveSession } from "./live/session.ts";
import type { SessionRecord, SessionRepo } from "./repo.ts";
import { isTerminal } from "./session.ts";

export interface LaunchSpec {
  /** The stored session to run (new, or ended and being resumed). */
  record: SessionRecord;
  /** Continue a conversation: the session's own (resume), or another's as a new branch (fork). */
  resume?: { conversationId: string; fork: boolean; transcriptPath?: string };
  /** Run in a new pane of this window (spawn) instead of a window of its own. */
  splitOf?: string;
  /** What `session.created` says about where the session came from. */
  origin?: Omit<SessionLaunch, "permissionMode" | "agentCommand">;
  warnings: string[];
}

export interface LauncherDeps {
  repo: Pick<SessionRepo, "stats">;
  tmux: Pick<Tmux, "newWindow" | "splitWindow">;
  agents: Pick<AgentRegistry, "get">;
  live: Pick<LiveSessions, "follow" | "forget">;
  acp?: AcpDriver;
  diagnostics?: DiagnosticsSink;
  settings: { stateDir: string; hookBaseUrl: () => string; maxSessions: number | null };
}

/**
 * Opens the agent's window for a stored session. The session is followed before the window
 * exists, so the agent's first hooks find it; a window that cannot be opened leaves it crashed
 * (with its events), not half-made.
 */
export async function launchWindow(deps: LauncherDeps, spec: LaunchSpec): Promise<LiveSession> {
  const rec = spec.record;
  const session = deps.live.follow(rec, "launch");
  /** A launch that fails is an observation: a new session ends crashed, a resumed one stays ended. */
  const failed = (error: unknown, code: "AGENT_UNAVAILABLE" | "TMUX_UNAVAILABLE", what: string) => {
    const message = (error as Error).message;
    session.observe({ kind: "launch-failed", error: message }, "ag");
    // Ended either way (crashed, or still the ended session it was): no longer followed.
    if (isTerminal(session.status().status)) deps.live.forget(rec.id);
    return new AgError(code, `${what}: ${message}`, { cause: error });
  };
  if (isHeadless(rec)) {
    try {
      const { spec: headless, warnings } = await headlessSpec(session, deps.settings.stateDir);
      spec.warnings.push(...warnings);
      await acpOf(deps.acp).launch(headless, sinkOf(session));
    } catch (error) {
      deps.diagnostics?.record("acp.launch", `session ${rec.id}: ${(error as Error).message}`);
      throw failed(error, "AGENT_UNAVAILABLE", "could not start the agent over ACP");
    }
    const launched = session.record();
    session.observe(
      {
        kind: "launched",
        detail: `session ${launched.name} created`,
        origin: launchMeta(launched, spec.origin),
      },
      "ag",
    );
    // The ACP session exists: the agent waits for a prompt.
    session.observe({ kind: "turn-ended" }, "acp");
    return session;
  }
  let plan: LaunchPlan;
  try {
    plan = await session.agent.prepareLaunch({
      sessionId: rec.id,
      workDir: rec.workDir,
      permissionMode: rec.permissionMode,
      agentCommand: rec.agentCommand,
      sessionDir: sessionDir(deps.settings.stateDir, rec.id),
      hookUrl: `${deps.settings.hookBaseUrl().replace(/\/+$/, "")}/v1/hooks/${rec.agent}`,
      hookSecret: rec.hookSecret,
      env: rec.env ?? {},
      resume: spec.resume,
    });
  } catch (error) {
    throw failed(error, "AGENT_UNAVAILABLE", "could not prepare the agent's launch");
  }
  spec.warnings.push(...plan.warnings);
  try {
    const placement = { tag: rec.id, cwd: rec.workDir, command: plan.command, env: plan.env };
    session.placed(
      spec.splitOf
        ? await deps.tmux.splitWindow(spec.splitOf, placement)
        : await deps.tmux.newWindow({ ...placement, name: rec.name }),
    );
  } catch (error) {
    deps.diagnostics?.record(
      "tmux.failure",
      `session ${rec.id}: could not open a window: ${(error as Error).message}`,
    );
    throw failed(error, "TMUX_UNAVAILABLE", "could not open a tmux window");
  }
  const launched = session.record();
  const detail = `session ${launched.name} created`;
  session.observe({ kind: "launched", detail, origin: launchMeta(launched, spec.origin) }, "ag");
  void session.readScreen();
  return session;
}

function launchMeta(rec: SessionRecord, origin: LaunchSpec["origin"] = {}): SessionLaunch {
  return { permissionMode: rec.permissionMode, agentCommand: rec.agentCommand, ...origin };
}

export function assertCapacity(deps: Pick<LauncherDeps, "repo" | "settings">): void {
  const limit = deps.settings.maxSessions;
  if (limit !== null && deps.repo.stats().active >= limit) {
    throw new AgError("SESSION_LIMIT_REACHED", `the limit of ${limit} concurrent sessions is reached`);
  }
}
