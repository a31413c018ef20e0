import type { SessionLaunch } from "../events/names.ts";
import { AgError } from "../shared/errors.ts";
import type { LaunchFailure, SessionDrivers } from "./drivers/index.ts";
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
  live: Pick<LiveSessions, "follow" | "forget">;
  drivers: Pick<SessionDrivers, "of">;
  settings: { maxSessions: number | null };
}

/**
 * Starts the agent of a stored session on its driver (a tmux window, or an ACP child). The
 * session is followed before the agent exists, so its first hooks find it; an agent that cannot
 * be started leaves it crashed (with its events), not half-made.
 */
export async function launchSession(deps: LauncherDeps, spec: LaunchSpec): Promise<LiveSession> {
  const rec = spec.record;
  const session = deps.live.follow(rec, "launch");
  /** A launch that fails is an observation: a new session ends crashed, a resumed one stays ended. */
  const failed: LaunchFailure = (error, code, what) => {
    const message = (error as Error).message;
    session.observe({ kind: "launch-failed", error: message }, "ag");
    // Ended either way (crashed, or still the ended session it was): no longer followed.
    if (isTerminal(session.status().status)) deps.live.forget(rec.id);
    return new AgError(code, `${what}: ${message}`, { cause: error });
  };
  const driver = deps.drivers.of(rec);
  await driver.launch(session, spec, failed);
  const launched = session.record();
  const detail = `session ${launched.name} created`;
  session.observe({ kind: "launched", detail, origin: launchMeta(launched, spec.origin) }, "ag");
  driver.launched(session);
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
