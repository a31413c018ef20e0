import { unverifiedWarning } from "../agents/probe.ts";
import type { AgentRegistry } from "../agents/registry.ts";
import { isVerified } from "../agents/versions.ts";
import type { TenantPolicy } from "../auth/tenants.ts";
import type { LaunchFailure, SessionDrivers } from "../drivers/index.ts";
import type { SessionLaunch } from "../events/names.ts";
import { AgError } from "../shared/errors.ts";
import type { Logger } from "../shared/log.ts";
import { launchDir } from "./lifecycle.ts";
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
  /**
   * A hibernated session's agent started again: the session never left (no `session.created`;
   * hibernation announces `session.woke`), and it stays idle while its agent comes up.
   */
  wake?: true;
  warnings: string[];
}

export interface LauncherDeps {
  repo: Pick<SessionRepo, "update">;
  agents: Pick<AgentRegistry, "get" | "launchVersion" | "notInstalled">;
  logger: Pick<Logger, "warn">;
  live: Pick<LiveSessions, "follow" | "forget">;
  drivers: Pick<SessionDrivers, "of">;
  /** Which folders a tenant's agents may run in (checked at every launch); none = unrestricted. */
  tenants?: Pick<TenantPolicy, "launchDir">;
  settings: { maxSessions: number | null };
}

/**
 * Starts the agent of a stored session on its driver (a tmux window, or an ACP child). The
 * session is followed before the agent exists, so its first hooks find it; an agent that cannot
 * be started leaves it crashed (with its events), not half-made.
 */
export async function launchSession(deps: LauncherDeps, given: LaunchSpec): Promise<LiveSession> {
  const spec = { ...given, record: await withAgentVersion(deps, given.record) };
  const rec = spec.record;
  const session = deps.live.follow(rec, spec.resume ? "resume" : "launch");
  /** A launch that fails is an observation: a new session ends crashed, a resumed one stays ended. */
  const failed: LaunchFailure = (error, code, what) => {
    const message = (error as Error).message;
    session.observe({ kind: "launch-failed", error: message }, "ag");
    // Ended either way (crashed, or still the ended session it was): no longer followed.
    if (isTerminal(session.status().status)) deps.live.forget(rec.id);
    // A refusal the adapter gave for a reason of its own (a Codex thread another process writes:
    // CONFLICT) keeps its code; anything else is the launch's failure.
    const kept = error instanceof AgError ? error.code : code;
    // An agent that could not start may simply not be installed: how to install it goes along.
    const hint =
      kept === "AGENT_UNAVAILABLE"
        ? deps.agents.notInstalled(rec.agent, { agentCommand: rec.agentCommand, path: rec.env?.PATH })
        : null;
    return new AgError(kept, `${what}: ${message}${hint ? `\n${hint}` : ""}`, { cause: error });
  };
  // The one place every launch passes: the folder is resolved and judged now, and the driver
  // starts the agent in that real path.
  let workDir: string;
  try {
    workDir = launchDir(deps.tenants, rec);
  } catch (error) {
    throw failed(error, "TENANT_WORKDIR_DENIED", "refused to start the agent");
  }
  const driver = deps.drivers.of(rec);
  await driver.launch(session, { ...spec, record: { ...rec, workDir } }, failed);
  const launched = session.record();
  const detail = `session ${launched.name} created`;
  if (!spec.wake)
    session.observe({ kind: "launched", detail, origin: launchMeta(launched, spec.origin) }, "ag");
  driver.launched(session);
  return session;
}

/**
 * The record with the version of the agent CLI this launch will run, read now (a relaunch of the
 * same binary asks nothing; a slow one is given up on, as unknown) and saved, before anything is
 * prepared: the adapter the session gets is the one for that version, launch flags included. An
 * unverified version runs all the same, said once in the log.
 */
async function withAgentVersion(deps: LauncherDeps, rec: SessionRecord): Promise<SessionRecord> {
  const agentVersion = await deps.agents.launchVersion(rec.agent, {
    agentCommand: rec.agentCommand,
    path: rec.env?.PATH,
  });
  const adapter = deps.agents.get(rec.agent);
  const verified = agentVersion === null ? null : isVerified(adapter.verifiedVersions, agentVersion);
  deps.repo.update(rec.id, { agentVersion, verified });
  const warning = unverifiedWarning(rec.name, adapter, agentVersion);
  if (warning) deps.logger.warn(warning);
  return { ...rec, agentVersion, verified };
}

function launchMeta(rec: SessionRecord, origin: LaunchSpec["origin"] = {}): SessionLaunch {
  return { permissionMode: rec.permissionMode, agentCommand: rec.agentCommand, ...origin };
}

/** One session coming to be, counted against maxSessions until its launch has ended. */
export interface SessionSlot {
  /** The slot is this session's: once its record is live it is counted once, not twice. */
  bind(sessionId: string): void;
  /** The launch is over (started, or failed): its record alone counts now. Idempotent. */
  release(): void;
}

/**
 * The session limit (maxSessions), counting the launches in flight as well as the live records:
 * a create checks and claims its slot in one step, before it awaits anything, so concurrent
 * creates cannot all pass a count that none of them has raised yet.
 */
export function createSessionSlots(deps: {
  repo: Pick<SessionRepo, "live">;
  settings: { maxSessions: number | null };
}): { claim(): SessionSlot } {
  /** Launches in flight, by the session each is bound to (null until its record exists). */
  const inFlight = new Map<symbol, string | null>();
  function taken(): number {
    const ids = new Set(deps.repo.live().map((rec) => rec.id));
    let unbound = 0;
    for (const id of inFlight.values()) {
      if (id === null) unbound++;
      else ids.add(id);
    }
    return ids.size + unbound;
  }
  return {
    claim() {
      const limit = deps.settings.maxSessions;
      if (limit === null) return { bind() {}, release() {} };
      if (taken() >= limit)
        throw new AgError("SESSION_LIMIT_REACHED", `the limit of ${limit} concurrent sessions is reached`);
      const slot = Symbol("session slot");
      inFlight.set(slot, null);
      return {
        bind: (sessionId) => {
          if (inFlight.has(slot)) inFlight.set(slot, sessionId);
        },
        release: () => {
          inFlight.delete(slot);
        },
      };
    },
  };
}
