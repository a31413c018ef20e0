import type { AuditLog } from "../../audit/index.ts";
import type { SessionService } from "../../sessions/index.ts";
import type { Clock } from "../../shared/clock.ts";
import { AgError, isAgError } from "../../shared/errors.ts";
import type { Logger } from "../../shared/log.ts";
import { DeliveryError } from "../channel.ts";
import type { BotApi, CallbackQuery, ChatMessage, ChatUser, Update } from "./api.ts";
import {
  type BudgetButton,
  type Choice,
  decodeAnswer,
  decodeBudgetButton,
  promptFingerprint,
} from "./callback.ts";
import { escapeHtml, truncate } from "./format.ts";
import type { OpenPrompts } from "./target.ts";
import type { TopicStore } from "./topics.ts";

/** How long one getUpdates request is held by the server when nothing happens. */
export const POLL_TIMEOUT_SECONDS = 25;
/** Waits after failed polls: doubling from the first to the last. */
export const POLL_BACKOFF = { initialMs: 1_000, maxMs: 30_000 };
/** A poll that outlives the server's hold by this much is abandoned (a half-open connection). */
const POLL_GRACE_MS = 15_000;

export const REFUSED_NOTIFY_ONLY =
  "This bot only notifies: nobody may answer agents from the chat (SVC_CHAT_ALLOWED_USERS is empty).";
export const REFUSED_NOT_ALLOWED = "You are not allowed to answer agents from this chat.";

export interface InboundDeps {
  api: BotApi;
  topics: TopicStore;
  groupId: string;
  /** User ids (as strings) allowed to approve, reject and send; empty: notify only. */
  allowedUsers: string[];
  sessions: Pick<SessionService, "get" | "answer" | "answerQuestion" | "send">;
  prompts: OpenPrompts;
  clock: Clock;
  logger: Logger;
  pollTimeoutSeconds?: number;
  backoff?: { initialMs: number; maxMs: number };
  /** Answers given from the chat are audited like the same answers over HTTP. */
  audit?: Pick<AuditLog, "append">;
  /** A budget-reached message's buttons: raise the budget that paused a session, or stop here. */
  budgets?: {
    raiseBy(sessionId: string, usd: number): Promise<unknown>;
    stop(sessionId: string): unknown;
  };
}

/** A reply to one update may take this long: a half-open connection must not pile them up. */
const REPLY_TIMEOUT_MS = 15_000;

export interface Inbound {
  start(): void;
  close(): Promise<void>;
}

/**
 * The inbound side of the chat bot: long-polls getUpdates and acts on two kinds of update —
 * an Approve / Reject button pressed on a permission prompt, and a text written in a session's
 * topic (sent to the agent). Only users in the allowed list may do either; everybody else gets
 * a refusal. Updates are handled concurrently so a slow send never holds up an approval.
 */
export function createInbound(deps: InboundDeps): Inbound {
  const { api, groupId, logger, clock } = deps;
  const allowed = new Set(deps.allowedUsers);
  const timeoutSeconds = deps.pollTimeoutSeconds ?? POLL_TIMEOUT_SECONDS;
  const backoff = deps.backoff ?? POLL_BACKOFF;
  const stop = new AbortController();
  const handling = new Set<Promise<void>>();
  let loop: Promise<void> | null = null;
  let cancelWait: (() => void) | null = null;

  async function poll(): Promise<void> {
    let offset = 0;
    let failures = 0;
    while (!stop.signal.aborted) {
      let updates: Update[];
      try {
        const signal = AbortSignal.any([
          stop.signal,
          AbortSignal.timeout(timeoutSeconds * 1000 + POLL_GRACE_MS),
        ]);
        updates = await api.getUpdates(offset, timeoutSeconds, signal);
      } catch (error) {
        if (stop.signal.aborted) return;
        failures++;
        const delay = delayAfter(error, failures);
        const say = `chat: polling for updates failed (${(error as Error).message}); next try in ${delay} ms`;
        if (failures === 1) logger.warn(say);
        else logger.debug(say);
        await wait(delay);
        continue;
      }
      if (failures > 0) logger.info("chat: polling for updates works again");
      failures = 0;
      for (const update of updates) {
        // Confirmed at the next poll: an update that fails is not offered again (it could repeat an action).
        offset = Math.max(offset, update.update_id + 1);
        const task = handle(update).catch((error) =>
          logger.error(`chat: update ${update.update_id} failed`, error),
        );
        handling.add(task);
        void task.finally(() => handling.delete(task));
      }
    }
  }

  function delayAfter(error: unknown, failures: number): number {
    if (error instanceof DeliveryError && error.retryAfterMs !== undefined) return error.retryAfterMs;
    return Math.min(backoff.maxMs, backoff.initialMs * 2 ** (failures - 1));
  }

  function wait(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const cancel = clock.setTimer(() => {
        cancelWait = null;
        resolve();
      }, ms);
      cancelWait = () => {
        cancel();
        resolve();
      };
    });
  }

  async function handle(update: Update): Promise<void> {
    if (update.callback_query) await onButton(update.callback_query);
    else if (update.message) await onText(update.message);
  }

  function refusal(user: ChatUser | undefined): string | null {
    if (allowed.size === 0) return REFUSED_NOTIFY_ONLY;
    return user && allowed.has(String(user.id)) ? null : REFUSED_NOT_ALLOWED;
  }

  async function onButton(query: CallbackQuery): Promise<void> {
    const signal = AbortSignal.any([stop.signal, AbortSignal.timeout(REPLY_TIMEOUT_MS)]);
    const budget = query.data ? decodeBudgetButton(query.data) : null;
    if (budget) return onBudgetButton(query, budget, signal);
    const answer = query.data ? decodeAnswer(query.data) : null;
    const message = query.message;
    if (!answer || !message || String(message.chat.id) !== groupId) {
      await api.answerCallbackQuery(
        query.id,
        "This button does not belong to a prompt of ag.",
        false,
        signal,
      );
      return;
    }
    const refused = refusal(query.from);
    if (refused) {
      logger.info(`chat: refused an answer from user ${query.from.id}`);
      await api.answerCallbackQuery(query.id, refused, true, signal);
      return;
    }
    let label: string | null = null;
    try {
      const pending = deps.sessions.get(answer.sessionId).pendingPermission;
      if (
        !pending ||
        pending.id !== answer.permissionId ||
        promptFingerprint(pending) !== answer.fingerprint
      ) {
        throw new AgError("NO_PENDING_PERMISSION", "This prompt no longer waits for an answer.");
      }
      if (typeof answer.choice === "number") {
        const choice = answer.choice;
        label = pending.options?.find((o) => o.index === choice)?.label ?? String(choice);
        await deps.sessions.answerQuestion(answer.sessionId, { option: choice }, answer.permissionId);
      } else await deps.sessions.answer(answer.sessionId, answer.choice === "approve", answer.permissionId);
      audited(query.from.id, answer, "success");
    } catch (error) {
      if (!isAgError(error)) throw error;
      audited(query.from.id, answer, "failure");
      // The API takes at most 200 characters here.
      await api.answerCallbackQuery(query.id, truncate(error.message, 200), true, signal);
      // The prompt is over (answered elsewhere, session gone): its buttons can only mislead.
      await api.removeKeyboard(groupId, message.message_id, signal).catch(() => {});
      return;
    }
    const verdict =
      answer.choice === "approve"
        ? "Approved"
        : answer.choice === "reject"
          ? "Rejected"
          : `Answered: ${label}`;
    logger.info(
      `chat: ${verdict.toLowerCase()} ${answer.permissionId} of session ${answer.sessionId} for user ${query.from.id}`,
    );
    if (deps.prompts.get(answer.sessionId)?.messageId === message.message_id)
      deps.prompts.delete(answer.sessionId);
    await api.answerCallbackQuery(query.id, verdict, false, signal);
    await markAnswered(
      message,
      `${answer.choice === "reject" ? "❌" : "✅"} ${verdict} by ${nameOf(query.from)}`,
      signal,
    );
  }

  /** "Raise by $N" or "Stop here" under a budget reached: the same as POST /v1/sessions/:id/budget(/stop). */
  async function onBudgetButton(
    query: CallbackQuery,
    button: BudgetButton,
    signal: AbortSignal,
  ): Promise<void> {
    const message = query.message;
    if (!deps.budgets || !message || String(message.chat.id) !== groupId) {
      await api.answerCallbackQuery(
        query.id,
        "This button does not belong to a budget of ag.",
        false,
        signal,
      );
      return;
    }
    const refused = refusal(query.from);
    if (refused) {
      await api.answerCallbackQuery(query.id, refused, true, signal);
      return;
    }
    const usd = button.action === "raise" ? button.cents / 100 : 0;
    try {
      if (button.action === "raise") await deps.budgets.raiseBy(button.sessionId, usd);
      else deps.budgets.stop(button.sessionId);
    } catch (error) {
      if (!isAgError(error)) throw error;
      await api.answerCallbackQuery(query.id, truncate(error.message, 200), true, signal);
      return;
    }
    const verdict = button.action === "raise" ? `Budget raised by $${usd.toFixed(2)}` : "Stopped here";
    deps.audit?.append({
      actor: `chat:${query.from.id}`,
      tenantId: null,
      action: button.action === "raise" ? "session.budget.raise" : "session.budget.stop",
      target: button.sessionId,
      outcome: "success",
      ip: null,
    });
    logger.info(`chat: ${verdict.toLowerCase()} for session ${button.sessionId} by user ${query.from.id}`);
    await api.answerCallbackQuery(query.id, verdict, false, signal);
    await markAnswered(
      message,
      `${button.action === "raise" ? "💵" : "⏹️"} ${verdict} by ${nameOf(query.from)}`,
      signal,
    );
  }

  /**
   * Appends who answered to the prompt and drops its buttons. The update gives the message as
   * plain text plus entities (UTF-16 offsets, as JS strings count), so appending keeps them valid.
   */
  async function markAnswered(message: ChatMessage, line: string, signal: AbortSignal): Promise<void> {
    const reply_markup = { inline_keyboard: [] };
    if (message.text === undefined) {
      await api.removeKeyboard(groupId, message.message_id, signal);
      return;
    }
    const text = `${message.text}\n\n${line}`;
    const entities = [
      ...(message.entities ?? []),
      { type: "bold", offset: message.text.length + 2, length: line.length },
    ];
    await api.editMessageText(
      { chat_id: groupId, message_id: message.message_id, text, entities, reply_markup },
      signal,
    );
  }

  function audited(
    userId: number,
    answer: { sessionId: string; choice: Choice },
    outcome: "success" | "failure",
  ) {
    deps.audit?.append({
      actor: `chat:${userId}`,
      tenantId: null,
      action:
        answer.choice === "approve"
          ? "session.approve"
          : answer.choice === "reject"
            ? "session.reject"
            : "session.answer",
      target: answer.sessionId,
      outcome,
      ip: null,
    });
  }

  async function onText(message: ChatMessage): Promise<void> {
    if (String(message.chat.id) !== groupId || message.from?.is_bot || message.text === undefined) return;
    if (message.message_thread_id === undefined) return;
    const sessionId = deps.topics.sessionOf(message.message_thread_id);
    if (!sessionId) return;
    const refused = refusal(message.from);
    if (refused) {
      logger.info(`chat: refused a message from user ${message.from?.id}`);
      await reply(message, `⛔ ${refused}`);
      return;
    }
    try {
      await deps.sessions.send(sessionId, message.text);
    } catch (error) {
      if (!isAgError(error)) throw error;
      await reply(message, `⚠️ Not sent to the agent: ${error.message}`);
    }
  }

  async function reply(to: ChatMessage, text: string): Promise<void> {
    await api.sendMessage(
      {
        chat_id: groupId,
        message_thread_id: to.message_thread_id,
        text: escapeHtml(text),
        parse_mode: "HTML",
        reply_parameters: { message_id: to.message_id, allow_sending_without_reply: true },
      },
      AbortSignal.any([stop.signal, AbortSignal.timeout(REPLY_TIMEOUT_MS)]),
    );
  }

  return {
    start() {
      if (loop || stop.signal.aborted) return;
      loop = poll().catch((error) => logger.error("chat: the update loop stopped", error));
    },
    async close() {
      stop.abort(new Error("ag is stopping"));
      cancelWait?.();
      await loop;
      await Promise.allSettled([...handling]);
    },
  };
}

function nameOf(user: ChatUser): string {
  if (user.username) return `@${user.username}`;
  return user.first_name ?? `user ${user.id}`;
}
