import type { KeyStep } from "../agents/agent.ts";
import type { DiagnosticsSink } from "../diagnostics/index.ts";
import type { AcpDriver, PermissionChoice } from "../drivers/acp/index.ts";
import type { Clock } from "../shared/clock.ts";
import { AgError, isAgError } from "../shared/errors.ts";
import type { Logger } from "../shared/log.ts";
import { inSpan } from "../telemetry/index.ts";
import { rememberPromptContext } from "../telemetry/turns.ts";
import type { Tmux } from "../tmux/tmux.ts";
import type { Exits } from "./exits.ts";
import { acpOf, assertTerminal, isHeadless } from "./headless.ts";
import { assertTypeable } from "./lifecycle.ts";
import type { DeliveryOptions, DeliveryResult } from "./live/delivery.ts";
import { deliverTo } from "./live/keyboard.ts";
import type { AgKeys } from "./live/observation.ts";
import type { LiveSessions } from "./live/registry.ts";
import type { LiveSession } from "./live/session.ts";
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

/**
 * CONTRACT §2's profiles. "Bash asks" (standard) means ag does not refuse it and the agent's
 * own permission prompt decides, as for "full": ag's policies only ever deny.
 */
const PROFILES: Record<PermissionProfile, Omit<PermissionPolicy, "profile">> = {
  readonly: { allowRead: true, allowWrite: false, allowBash: false },
  standard: { allowRead: true, allowWrite: true, allowBash: true },
  full: { allowRead: true, allowWrite: true, allowBash: true },
};

/**
 * How long an answer waits for its dialog to be drawn. Claude Code draws it 30–250 ms after its
 * permission hook, with every core busy (measured).
 */
const DRAW_WAIT_MS = 3_000;

/** A delivery, and why it did not happen when it did not (for `/send`'s answer). */
export type SendResult = DeliveryResult & { answered?: boolean };

export interface ActionDeps {
  repo: Pick<SessionRepo, "get" | "live" | "update">;
  tmux: Pick<
    Tmux,
    "paste" | "sendKeys" | "sendLiteral" | "capturePane" | "killPane" | "killWindow" | "listPanes"
  >;
  /** Agents on their way out (a resume waits for them). */
  exits: Pick<Exits, "ending">;
  live: Pick<LiveSessions, "get" | "running" | "follow">;
  acp?: AcpDriver;
  clock: Clock;
  logger: Logger;
  diagnostics?: DiagnosticsSink;
  delivery: DeliveryOptions;
  idleTimeoutMs: number;
}

/** What a client does to a running session: type, answer, interrupt, stop; and its policy. */
export function createSessionActions(deps: ActionDeps) {
  function record(id: string): SessionRecord {
    const found = deps.repo.get(id);
    if (!found) throw new AgError("SESSION_NOT_FOUND", `no session ${id}`);
    return found;
  }

  function deliver(session: LiveSession, text: string): Promise<DeliveryResult> {
    return session.typing(() =>
      inSpan(
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
      ),
    );
  }

  /** One delivery, with what metrics and diagnostics record of it. */
  async function typeIn(session: LiveSession, text: string): Promise<DeliveryResult> {
    const started = deps.clock.now();
    const result = isHeadless(session.record())
      ? await promptHeadless(session, text)
      : await deliverTo(session, deps, text, deps.delivery);
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

  /** Over ACP a prompt is a request: the agent has it once it is sent (no typing, no retries). */
  async function promptHeadless(session: LiveSession, text: string): Promise<DeliveryResult> {
    try {
      await acpOf(deps.acp).prompt(session.id, text);
      return { delivered: true, attempts: 1 };
    } catch (error) {
      if (isAgError(error) && error.code === "SESSION_BUSY") throw error;
      return { delivered: false, attempts: 1, reason: (error as Error).message };
    }
  }

  /** An answer to an ACP session's permission: the RPC response with the option chosen. */
  function answerHeadless(
    session: LiveSession,
    choice: PermissionChoice,
    what: AgKeys,
    dialog: string,
  ): Promise<Session> {
    return inSpan(
      `session.${what}`,
      { "ag.session.id": session.id, "ag.permission.id": dialog },
      async () => {
        acpOf(deps.acp).answer(session.id, choice);
        return toSession(record(session.id));
      },
    );
  }

  /**
   * Presses ag's keys for the session, then tells its state what they were. Keys that answer a
   * dialog are for that dialog only: checked again once the keyboard is ours (two answers to one
   * dialog must not let the second land on the dialog after it).
   */
  function press(session: LiveSession, steps: KeyStep[], what: AgKeys, dialog?: string): Promise<void> {
    const attributes = {
      "ag.session.id": session.id,
      ...(dialog === undefined ? {} : { "ag.permission.id": dialog }),
    };
    return inSpan(`session.${what}`, attributes, () => pressNow(session, steps, what, dialog));
  }

  function pressNow(session: LiveSession, steps: KeyStep[], what: AgKeys, dialog?: string): Promise<void> {
    return session.typing(async () => {
      if (dialog !== undefined) {
        await drawn(session, dialog);
        const now = session.status().pending;
        if (now?.id !== dialog)
          throw new AgError(
            now ? "PERMISSION_MISMATCH" : "NO_PENDING_PERMISSION",
            now
              ? `the pending permission is now ${now.id}, not ${dialog}`
              : `${dialog} was answered meanwhile`,
          );
      }
      const pane = session.record().paneId;
      // A session not placed yet has nothing to type into: saying "done" would be a lie.
      if (!pane) throw new AgError("CONFLICT", `session ${session.id} has no pane to press keys in yet`);
      for (const [i, step] of steps.entries()) {
        // The agent redraws between keys of a dialog; a key sent into the redraw can be lost.
        if (i > 0) await new Promise<void>((resolve) => deps.clock.setTimer(resolve, 150));
        if ("keys" in step) await deps.tmux.sendKeys(pane, step.keys);
        else await deps.tmux.sendLiteral(pane, step.text);
      }
      session.observe({ kind: "keys", keys: what, ...(dialog === undefined ? {} : { dialog }) }, "ag");
    });
  }

  /**
   * Waits until the screen has shown the dialog an answer is for. The agent's hook comes before
   * its dialog is drawn, and keys pressed in between are lost: the dialog then waits with its
   * answer already reported (seen under load: an Escape 5 ms after the hook, the dialog drawn
   * 50 ms later). Past DRAW_WAIT_MS the keys go anyway: a dialog the screen reader does not know.
   */
  async function drawn(session: LiveSession, dialog: string): Promise<void> {
    const deadline = deps.clock.now() + DRAW_WAIT_MS;
    const waits = () => {
      const state = session.status();
      return state.pending?.id === dialog && !state.dialogSeen;
    };
    // One fresh look; after it, the pane's own output brings each new frame (no re-reading on a timer).
    if (waits()) await session.readScreen();
    while (waits()) {
      const left = deadline - deps.clock.now();
      if (left <= 0) {
        deps.logger.debug(`session ${session.id}: ${dialog} not seen on screen; answering anyway`);
        return;
      }
      await session.nextChange(left);
    }
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

  async function answerQuestion(
    session: LiveSession,
    id: string,
    answer: QuestionAnswer,
    permissionId?: string,
  ): Promise<void> {
    const pending = pendingOf(session, id, permissionId);
    if (pending.kind !== "question") {
      throw new AgError(
        "CONFLICT",
        `session ${id} waits for a ${pending.kind} permission, not an answer: approve or reject it`,
      );
    }
    if (pending.multiSelect) {
      // Its digits only toggle boxes, and its Submit row has no number: not answerable by keys yet.
      throw new AgError(
        "CONFLICT",
        `session ${id} asks a multi-select question, which ag cannot answer yet: answer it in the agent's terminal`,
      );
    }
    if ("option" in answer) {
      // Options not known (a question seen only on screen, cut off): only what a digit picks.
      const count = pending.options?.length || 9;
      if (answer.option < 1 || answer.option > count) {
        throw new AgError("VALIDATION_ERROR", `option ${answer.option} is not one of the ${count} options`);
      }
    } else {
      assertTypeable(answer.text, "text");
      // One line, typed into the dialog's own row: a newline would submit, a tab move the cursor.
      if (/[\n\t]/.test(answer.text))
        throw new AgError("VALIDATION_ERROR", "an answer to a question is one line without tabs");
    }
    await press(session, session.agent.keys.answer(pending, answer), "answer", pending.id);
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
  function end(id: string, reason: "killed" | "idle_timeout"): Promise<Session> {
    return inSpan("session.kill", { "ag.session.id": id, "ag.session.end_reason": reason }, () =>
      endOne(id, reason),
    );
  }

  async function endOne(id: string, reason: "killed" | "idle_timeout"): Promise<Session> {
    const rec = record(id);
    if (isTerminal(rec.status))
      throw new AgError("SESSION_NOT_FOUND", `session ${id} has already ended (${rec.status})`);
    // A parent takes its teammates (panes of its window) with it, each ended in its own right.
    for (const child of deps.repo.live().filter((s) => s.parentId === id))
      await end(child.id, reason).catch(() => {});
    const session = deps.live.get(id) ?? deps.live.follow(rec, "adopt");
    const detail = reason === "killed" ? `session ${rec.name} killed` : `idle for ${deps.idleTimeoutMs} ms`;
    if (isHeadless(rec)) {
      // What the agent started outside its process group (a command under setsid) goes with it too.
      await deps.exits.ending(id, acpOf(deps.acp).pid(id));
      session.observe({ kind: "closed", reason, detail }, "ag");
      await acpOf(deps.acp).stop(id);
      return toSession(record(id));
    }
    // The agent exits a moment after its window closes (writing its last lines): who it is.
    const pid = rec.paneId
      ? ((await deps.tmux.listPanes().catch(() => [])).find((p) => p.paneId === rec.paneId)?.pid ?? null)
      : null;
    await deps.exits.ending(id, pid);
    // The end is recorded before the window goes, so its closing reads as ag's doing, not a crash.
    session.observe({ kind: "closed", reason, detail }, "ag");
    const shared = rec.windowId && deps.repo.live().some((s) => s.id !== id && s.windowId === rec.windowId);
    if (shared && rec.paneId) await deps.tmux.killPane(rec.paneId).catch(() => {});
    else if (rec.windowId) await deps.tmux.killWindow(rec.windowId).catch(() => {});
    return toSession(record(id));
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
        await answerQuestion(
          session,
          id,
          /^\d+$/.test(trimmed) ? { option: Number(trimmed) } : { text: trimmed },
        );
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
      if (isHeadless(session.record()))
        return answerHeadless(session, { approve }, approve ? "approve" : "reject", pending.id);
      // The keys depend on which dialog is pending (the start-up dialogs preselect different options).
      const keys = approve ? session.agent.keys.approve(pending) : session.agent.keys.reject(pending);
      await press(
        session,
        keys.map((key) => ({ keys: [key] })),
        approve ? "approve" : "reject",
        pending.id,
      );
      return answered(session);
    },

    async answerQuestion(id: string, answer: QuestionAnswer, permissionId?: string): Promise<Session> {
      const session = deps.live.running(id);
      if (isHeadless(session.record())) {
        const pending = pendingOf(session, id, permissionId);
        if (!("option" in answer))
          throw new AgError("VALIDATION_ERROR", "an ACP permission is answered with one of its options");
        return answerHeadless(session, { option: answer.option }, "answer", pending.id);
      }
      await answerQuestion(session, id, answer, permissionId);
      return answered(session);
    },

    async interrupt(id: string): Promise<Session> {
      const session = deps.live.running(id);
      // A second Ctrl+C at idle would exit the agent: there is nothing to interrupt.
      if (session.status().status === "idle")
        throw new AgError("CONFLICT", `session ${id} is idle: nothing to interrupt`);
      if (isHeadless(session.record())) {
        await inSpan("session.interrupt", { "ag.session.id": id }, () => acpOf(deps.acp).interrupt(id));
        return toSession(record(id));
      }
      await press(session, [{ keys: session.agent.keys.interrupt }], "interrupt");
      return toSession(record(id));
    },

    async escape(id: string): Promise<Session> {
      const session = deps.live.running(id);
      assertTerminal(session.record(), "keys");
      await press(session, [{ keys: session.agent.keys.escape }], "escape");
      return toSession(record(id));
    },

    async pane(id: string): Promise<{ id: string; content: string }> {
      const rec = record(id);
      assertTerminal(rec, "a pane");
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
