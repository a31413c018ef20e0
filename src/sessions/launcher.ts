import { AgError } from "../shared/errors.ts";
import type { SessionContext } from "./context.ts";
import { sessionDir } from "./lifecycle.ts";
import type { LiveSession } from "./live.ts";
import type { SessionRecord } from "./repo.ts";

export interface LaunchSpec {
  /** The stored session to run (new, or ended and being resumed). */
  record: SessionRecord;
  /** Continue a conversation: the session's own (resume), or another's as a new branch (fork). */
  resume?: { conversationId: string; fork: boolean };
  /** Run in a new pane of this window (spawn) instead of a window of its own. */
  splitOf?: string;
  /** What `session.created` says about where the session came from. */
  origin?: Record<string, unknown>;
  warnings: string[];
}

/**
 * Opens the agent's window for a stored session and starts following it. The record exists
 * before the window does, so the agent's first hooks find it; a window that cannot be opened
 * leaves the session crashed, not half-made.
 */
export async function launchWindow(ctx: SessionContext, spec: LaunchSpec): Promise<LiveSession> {
  const { deps } = ctx;
  const rec = spec.record;
  const plan = await deps.agent.prepareLaunch({
    sessionId: rec.id,
    workDir: rec.workDir,
    permissionMode: rec.permissionMode,
    agentCommand: rec.agentCommand,
    sessionDir: sessionDir(deps.settings.stateDir, rec.id),
    hookBaseUrl: deps.settings.hookBaseUrl(),
    hookSecret: rec.hookSecret,
    env: rec.env ?? {},
    resume: spec.resume,
  });
  spec.warnings.push(...plan.warnings);
  let pane: { windowId: string; paneId: string };
  try {
    const placement = { tag: rec.id, cwd: rec.workDir, command: plan.command, env: plan.env };
    pane = spec.splitOf
      ? await deps.tmux.splitWindow(spec.splitOf, placement)
      : await deps.tmux.newWindow({ ...placement, name: rec.name });
  } catch (error) {
    const at = new Date(deps.clock.now()).toISOString();
    deps.repo.update(rec.id, { status: "crashed", endedAt: at, endReason: "launch failed", updatedAt: at });
    deps.diagnostics?.record(
      "tmux.failure",
      `session ${rec.id}: could not open a window: ${(error as Error).message}`,
    );
    throw new AgError("TMUX_UNAVAILABLE", `could not open a tmux window: ${(error as Error).message}`, {
      cause: error,
    });
  }
  deps.repo.update(rec.id, { windowId: pane.windowId, paneId: pane.paneId });
  const stored = deps.repo.get(rec.id)!;
  const session = ctx.follow(stored, true);
  ctx.publish(stored, "session.created", `session ${stored.name} created`, {
    permissionMode: stored.permissionMode,
    agentCommand: stored.agentCommand,
    ...spec.origin,
  });
  void session.readScreen();
  return session;
}

export function assertCapacity(ctx: SessionContext): void {
  const limit = ctx.deps.settings.maxSessions;
  if (limit !== null && ctx.deps.repo.stats().active >= limit) {
    throw new AgError("SESSION_LIMIT_REACHED", `the limit of ${limit} concurrent sessions is reached`);
  }
}
