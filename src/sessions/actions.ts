import type { Clock } from "../shared/clock.ts";
import { AgError } from "../shared/errors.ts";
import type { SessionContext } from "./context.ts";
import type { DeliveryResult } from "./delivery.ts";
import { answerKeys, assertTypeable } from "./lifecycle.ts";
import type { LiveSession } from "./live.ts";
import { deliverTo } from "./port.ts";
import { toSession } from "./repo.ts";
import {
  isTerminal,
  MAX_PROMPT_BYTES,
  type PermissionPolicy,
  type PermissionProfile,
  type Session,
} from "./session.ts";

/**
 * CONTRACT §2's profiles. "Bash asks" (standard) means ag does not refuse it and the agent's
 * own permission prompt decides, as for "full": ag's policies only ever deny.
 */
const PROFILES: Record<PermissionProfile, Omit<PermissionPolicy, "profile">> = {
  readonly: { allowRead: true, allowWrite: false, allowBash: false },
  standard: { allowRead: true, allowWrite: true, allowBash: true },
  full: { allowRead: true, allowWrite: true, allowBash: true },
};

/** What a client does to a running session: type, answer, interrupt, stop; and its policy. */
export function createSessionActions(ctx: SessionContext) {
  const { deps } = ctx;

  function deliver(session: LiveSession, text: string): Promise<DeliveryResult> {
    return ctx.exclusive(session.id, async () => {
      const started = deps.clock.now();
      const result = await deliverTo(session, deps.tmux, deps.agent, deps.clock, text, ctx.delivery);
      session.recordDelivery(result.delivered, result.attempts, deps.clock.now() - started);
      if (!result.delivered) {
        deps.diagnostics?.record(
          "delivery.failed",
          `session ${session.id}: not delivered after ${result.attempts} attempt(s): ${result.reason ?? "unknown"}`,
        );
      } else if (result.attempts > 1) {
        deps.diagnostics?.record(
          "delivery.retry",
          `session ${session.id}: delivered at attempt ${result.attempts}`,
        );
      }
      return result;
    });
  }

  /** Ends a session ag stops: its window closes, the record says why, the bus is told. */
  async function end(id: string, reason: "killed" | "idle_timeout"): Promise<Session> {
    const rec = ctx.record(id);
    if (isTerminal(rec.status))
      throw new AgError("SESSION_NOT_FOUND", `session ${id} has already ended (${rec.status})`);
    // A parent takes its teammates (panes of its window) with it, each ended in its own right.
    for (const child of deps.repo.live().filter((s) => s.parentId === id))
      await end(child.id, reason).catch(() => {});
    const session = ctx.live.get(id);
    session?.markKilled();
    const shared = rec.windowId && deps.repo.live().some((s) => s.id !== id && s.windowId === rec.windowId);
    if (shared && rec.paneId) await deps.tmux.killPane(rec.paneId).catch(() => {});
    else if (rec.windowId) await deps.tmux.killWindow(rec.windowId).catch(() => {});
    const at = new Date(deps.clock.now()).toISOString();
    const status = reason === "killed" ? "killed" : "completed";
    deps.repo.update(id, { status, pendingPermission: null, updatedAt: at, endedAt: at, endReason: reason });
    if (reason === "killed") ctx.publish(rec, "session.killed", `session ${rec.name} killed`);
    else ctx.publish(rec, "status.stopped", `idle for ${deps.settings.idleTimeoutMs} ms`, { reason });
    ctx.publish(rec, "session.ended", reason, { reason });
    ctx.forget(id);
    return toSession(ctx.record(id));
  }

  function storePolicy(id: string, policy: PermissionPolicy): PermissionPolicy {
    const rec = ctx.record(id);
    deps.repo.update(id, { permissions: policy, updatedAt: new Date(deps.clock.now()).toISOString() });
    deps.logger.info(`session ${rec.name}: permission policy ${policy.profile}`, policy);
    return policy;
  }

  return {
    deliver,
    end,

    async send(id: string, text: string): Promise<DeliveryResult> {
      const session = ctx.running(id);
      if (session.record().status === "permission_prompt") {
        throw new AgError(
          "SESSION_BUSY",
          `session ${id} waits for a permission answer: approve or reject it first`,
        );
      }
      return deliver(session, normalizeText(text, "text"));
    },

    async answer(id: string, approve: boolean, permissionId?: string): Promise<Session> {
      const session = ctx.running(id);
      const pending = session.record().pendingPermission;
      if (!pending)
        throw new AgError("NO_PENDING_PERMISSION", `session ${id} has no pending permission prompt`);
      if (permissionId !== undefined && permissionId !== pending.id) {
        throw new AgError(
          "PERMISSION_MISMATCH",
          `the pending permission is ${pending.id}, not ${permissionId}`,
        );
      }
      // The keys depend on which dialog is pending (the start-up dialogs preselect different options).
      const keys = answerKeys(deps.agent, pending, approve);
      await ctx.exclusive(id, () => pressEach(session, keys, deps.clock));
      return toSession(ctx.record(id));
    },

    async interrupt(id: string): Promise<Session> {
      const session = ctx.running(id);
      // A second Ctrl+C at idle would exit the agent: there is nothing to interrupt.
      if (session.record().status === "idle")
        throw new AgError("CONFLICT", `session ${id} is idle: nothing to interrupt`);
      await ctx.exclusive(id, () => session.sendKeys(deps.agent.keys.interrupt));
      return toSession(ctx.record(id));
    },

    async escape(id: string): Promise<Session> {
      const session = ctx.running(id);
      await ctx.exclusive(id, () => session.sendKeys(deps.agent.keys.escape));
      return toSession(ctx.record(id));
    },

    kill: (id: string) => end(id, "killed"),

    async pane(id: string): Promise<{ id: string; content: string }> {
      const rec = ctx.record(id);
      if (!rec.paneId || isTerminal(rec.status))
        throw new AgError("SESSION_NOT_FOUND", `session ${id} has no pane`);
      return { id, content: await deps.tmux.capturePane(rec.paneId) };
    },

    setPolicy: (id: string, policy: Omit<PermissionPolicy, "profile">) =>
      storePolicy(id, { profile: "custom", ...policy }),
    setProfile: (id: string, profile: PermissionProfile) =>
      storePolicy(id, { profile, ...PROFILES[profile] }),
  };
}

/**
 * CRLF is a line break typed on another system: one newline. Other control characters are
 * refused, and so is text over 256 KiB (CONTRACT §2).
 */
export function normalizeText(text: string, field: string): string {
  const bytes = Buffer.byteLength(text);
  if (bytes > MAX_PROMPT_BYTES) {
    throw new AgError("PAYLOAD_TOO_LARGE", `${field} is ${bytes} bytes; the limit is ${MAX_PROMPT_BYTES}`);
  }
  const normalized = text.replace(/\r\n/g, "\n");
  assertTypeable(normalized, field);
  return normalized;
}

async function pressEach(session: LiveSession, keys: string[], clock: Clock): Promise<void> {
  for (const [i, key] of keys.entries()) {
    if (i > 0) await new Promise<void>((resolve) => clock.setTimer(resolve, 150));
    await session.sendKeys([key]);
  }
}
