import type { AuditLog } from "../audit/index.ts";
import type { DiagnosticsSink } from "../diagnostics/index.ts";
import { assertTerminal, type SessionDrivers } from "../drivers/index.ts";
import type { AgKeys } from "../drivers/observation.ts";
import type { DeliveryResult } from "../drivers/tmux/delivery.ts";
import type { Clock } from "../shared/clock.ts";
import { AgError } from "../shared/errors.ts";
import type { Logger } from "../shared/log.ts";
import { inSpan } from "../telemetry/index.ts";
import { rememberPromptContext } from "../telemetry/turns.ts";
import { assertTypeable } from "./lifecycle.ts";
import type { Lineage } from "./lineage.ts";
import type { LiveSessions } from "./live/registry.ts";
import type { LiveSession } from "./live/session.ts";
import { PROFILES } from "./policy.ts";
import { type SessionRecord, type SessionRepo, toSession } from "./repo.ts";
import {
  isTerminal,
  MAX_PROMPT_BYTES,
  type PendingPermission,
  type PermissionPolicy,
  type PermissionProfile,
  type QuestionAnswer,
  type Session,
} from "./session.ts";

/** Why ag ends a session: asked to (killed), or its own idle timeout. */
type EndReason = "killed" | "idle_timeout";

/**
 * How long ending an idle session waits for its transcript to hold the end of the turn it has
 * told: the agent tells a turn's end before it has written the turn's last lines, and a kill in
 * between cuts them from the record (Claude Code, loaded: its reply never reached the file).
 */
export const END_SETTLE_MS = 3_000;

/** A delivery, and why it did not happen when it did not (for `/send`'s answer). */
export type SendResult = DeliveryResult & { answered?: boolean };

export interface ActionDeps {
  repo: Pick<SessionRepo, "get" | "live" | "update">;
  live: Pick<LiveSessions, "get" | "running" | "follow">;
  drivers: Pick<SessionDrivers, "of">;
  clock: Clock;
  logger: Logger;
  diagnostics?: DiagnosticsSink;
  idleTimeoutMs: number;
  lineage: Pick<Lineage, "liveDescendants">;
  /** Where the sessions ag ends with their creator are recorded. */
  audit?: Pick<AuditLog, "append">;
  beforePrompt?: (session: SessionRecord, text: string) => Promise<void>;
}

/** What a client does to a running session: type, answer, interrupt, stop; and its policy. */
export function createSessionActions(deps: ActionDeps) {
  function record(id: string): SessionRecord {
    const found = deps.repo.get(id);
    if (!found) throw new AgError("SESSION_NOT_FOUND", `no session ${id}`);
    return found;
  }

  function deliver(session: LiveSession, text: string): Promise<DeliveryResult> {
    return session.typing(async () => {
      await beforePrompt(session, text);
      return inSpan(
        "session.deliver",
        { "ag.session.id": session.id, "ag.prompt.bytes": Buffer.byteLength(text) },
        (span) => {
          // The turn this prompt starts is traced as this delivery's child.
          rememberPromptContext(session.id);
          return typeIn(session, text).then((result) => {
            span.setAttributes({
              "ag.delivery.delivered": result.delivered,
              "ag.delivery.attempts": result.attempts,
            });
            return result;
          });
        },
      );
    });
  }

  /** What must happen before a prompt goes in; a failure of it is logged, the prompt still goes. */
  async function beforePrompt(session: LiveSession, text: string): Promise<void> {
    try {
      await deps.beforePrompt?.(session.record(), text);
    } catch (error) {
      deps.logger.warn(`session ${session.id}: before its prompt`, error);
    }
  }

  /** One delivery, with what metrics and diagnostics record of it. */
  async function typeIn(session: LiveSession, text: string): Promise<DeliveryResult> {
    const started = deps.clock.now();
    const result = await deps.drivers.of(session.record()).deliver(session, text);
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
  }

  /**
   * ag's answer or interruption, by the session's driver (keys for a terminal, an RPC over ACP),
   * inside its span.
   */
  function act(
    session: LiveSession,
    what: AgKeys,
    work: () => Promise<void>,
    dialog?: string,
  ): Promise<void> {
    const attributes = {
      "ag.session.id": session.id,
      ...(dialog === undefined ? {} : { "ag.permission.id": dialog }),
    };
    return inSpan(`session.${what}`, attributes, work);
  }

  /** The pending dialog, checked against the id the client answers. */
  function pendingOf(session: LiveSession, id: string, permissionId?: string): PendingPermission {
    const pending = session.status().pending;
    if (!pending)
      throw new AgError(
        "NO_PENDING_PERMISSION",
        `session ${id} has no pending permission prompt or question`,
      );
    if (permissionId !== undefined && permissionId !== pending.id) {
      throw new AgError(
        "PERMISSION_MISMATCH",
        `the pending permission is ${pending.id}, not ${permissionId}`,
      );
    }
    return pending;
  }

  /**
   * The session once an answer's keys are pressed: ag's own keys are evidence of the state like
   * a hook (the fusion applied them before this returns), so the answer says what GET says next
   * — the prompt cleared, working (approve, answer) or idle (reject) — not the state before.
   */
  function answered(session: LiveSession): Session {
    return toSession(record(session.id));
  }

  /** Ends a session ag stops: its state says why (and tells the bus), then its window closes. */
  function end(id: string, reason: EndReason, detail?: string): Promise<Session> {
    return inSpan("session.kill", { "ag.session.id": id, "ag.session.end_reason": reason }, () =>
      endOne(id, reason, detail),
    );
  }

  async function endOne(id: string, reason: EndReason, given?: string): Promise<Session> {
    const rec = record(id);
    if (isTerminal(rec.status))
      throw new AgError("SESSION_NOT_FOUND", `session ${id} has already ended (${rec.status})`);
    await endOffspring(rec, reason);
    const session = deps.live.get(id) ?? deps.live.follow(rec, "adopt");
    // A turn cut short by the kill has nothing more to write; an ended one may (END_SETTLE_MS).
    if (session.status().status === "idle") await session.settleTranscript(END_SETTLE_MS);
    const detail =
      given ?? (reason === "killed" ? `session ${rec.name} killed` : `idle for ${deps.idleTimeoutMs} ms`);
    await deps.drivers.of(rec).end(session, () => session.observe({ kind: "closed", reason, detail }, "ag"));
    return toSession(record(id));
  }

  /**
   * Nothing a session started outlives it: its teammates (panes of its window) and the sessions
   * its key created, however deep, are ended first, each in its own right and each recorded in
   * the audit log. Called again once it has ended by itself (its agent exited).
   */
  async function endOffspring(parent: SessionRecord, reason: EndReason): Promise<void> {
    for (const child of deps.lineage.liveDescendants(parent.id)) {
      // Ended meanwhile with its own parent, which went first.
      if (isTerminal(deps.repo.get(child.id)?.status ?? "killed")) continue;
      const ended = await end(
        child.id,
        reason,
        `session ${child.name} ended with ${parent.name}, which created it`,
      )
        .then(() => true)
        .catch((error) => {
          deps.logger.warn(`session ${child.name} did not end with ${parent.name}`, error);
          return false;
        });
      deps.audit?.append({
        actor: "ag",
        tenantId: child.tenantId,
        action: "session.kill.cascade",
        target: child.id,
        outcome: ended ? "success" : "failure",
        ip: null,
      });
    }
  }

  /** Answers the pending question through the session's driver. */
  async function answerPending(
    session: LiveSession,
    answer: QuestionAnswer,
    permissionId?: string,
  ): Promise<Session> {
    const pending = pendingOf(session, session.id, permissionId);
    const driver = deps.drivers.of(session.record());
    await act(session, "answer", () => driver.answer(session, pending, answer), pending.id);
    return answered(session);
  }

  function storePolicy(id: string, policy: PermissionPolicy): PermissionPolicy {
    const rec = record(id);
    deps.repo.update(id, { permissions: policy, updatedAt: new Date(deps.clock.now()).toISOString() });
    deps.logger.info(`session ${rec.name}: permission policy ${policy.profile}`, policy);
    return policy;
  }

  return {
    deliver,
    end,
    /** Ends what the ended session `id` created (when its agent ended it by itself). */
    endOffspringOf(id: string): Promise<void> {
      const rec = deps.repo.get(id);
      return rec ? endOffspring(rec, "killed") : Promise.resolve();
    },

    /**
     * Types a message. While the agent asks a question, the text answers it (a bare number picks
     * that option); while it waits for a permission, nothing is typed (409).
     */
    async send(id: string, text: string): Promise<SendResult> {
      const session = deps.live.running(id);
      const status = session.status().status;
      if (status === "permission_prompt") {
        throw new AgError(
          "SESSION_BUSY",
          `session ${id} waits for a permission answer: approve or reject it first`,
        );
      }
      const normalized = normalizeText(text, "text");
      if (status === "asking") {
        const trimmed = normalized.trim();
        await answerPending(session, /^\d+$/.test(trimmed) ? { option: Number(trimmed) } : { text: trimmed });
        return { delivered: true, attempts: 1, answered: true };
      }
      return deliver(session, normalized);
    },

    async answer(id: string, approve: boolean, permissionId?: string): Promise<Session> {
      const session = deps.live.running(id);
      const pending = pendingOf(session, id, permissionId);
      if (approve && pending.kind === "question") {
        throw new AgError(
          "CONFLICT",
          `session ${id} asks a question: answer it with POST /v1/sessions/${id}/answer {option | text}`,
        );
      }
      const driver = deps.drivers.of(session.record());
      const what = approve ? "approve" : "reject";
      await act(session, what, () => driver.decide(session, pending, approve), pending.id);
      return answered(session);
    },

    answerQuestion: (id: string, answer: QuestionAnswer, permissionId?: string): Promise<Session> =>
      answerPending(deps.live.running(id), answer, permissionId),

    async interrupt(id: string): Promise<Session> {
      const session = deps.live.running(id);
      // A second Ctrl+C at idle would exit the agent: there is nothing to interrupt.
      if (session.status().status === "idle")
        throw new AgError("CONFLICT", `session ${id} is idle: nothing to interrupt`);
      const driver = deps.drivers.of(session.record());
      await act(session, "interrupt", () => driver.interrupt(session));
      return toSession(record(id));
    },

    async escape(id: string): Promise<Session> {
      const session = deps.live.running(id);
      assertTerminal(session.record(), "keys");
      const driver = deps.drivers.of(session.record());
      await act(session, "escape", () => driver.escape(session));
      return toSession(record(id));
    },

    async pane(id: string): Promise<{ id: string; content: string }> {
      const rec = record(id);
      assertTerminal(rec, "a pane");
      if (!rec.paneId || isTerminal(rec.status))
        throw new AgError("SESSION_NOT_FOUND", `session ${id} has no pane`);
      return { id, content: await deps.drivers.of(rec).capture(rec) };
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
