import { type AgEvent, type EventSession, pendingPermissionOf } from "../../events/bus.ts";
import type { Clock } from "../../shared/clock.ts";
import type { Logger } from "../../shared/log.ts";
import type { ChannelTarget } from "../channel.ts";
import { humanLinks } from "../link.ts";
import { type BotApi, BotApiError, type ChatMessage } from "./api.ts";
import {
  type ChatText,
  formatBatch,
  formatStatus,
  isForwarded,
  isMessageEvent,
  MAX_MESSAGE_CHARS,
  topicName,
} from "./format.ts";
import type { TopicStore } from "./topics.ts";

/** How long the first message.* event of a run waits for more of the same session to join it. */
export const BATCH_WINDOW_MS = 1_500;
/** At most this many message.* events in one chat message. */
const MAX_BATCH = 50;
/** Events remembered between `accepts` and `send` (the dispatcher's queue is bounded too). */
const MAX_SEEN = 10_000;
/** Batch wait + topic creation + the message (and, rarely, a second topic after a deleted one). */
const TIMEOUT_MS = 15_000;

/** The prompt message of each session whose buttons are still live (shared with the inbound side). */
export type OpenPrompts = Map<string, { messageId: number; permissionId: string }>;

export interface ChatTargetDeps {
  api: BotApi;
  topics: TopicStore;
  groupId: string;
  verbose: boolean;
  prompts: OpenPrompts;
  /** Where the links of events that need a human point (config `dashboardUrl`). */
  dashboardUrl: string;
  clock: Clock;
  logger: Logger;
  batchWindowMs?: number;
}

/**
 * The outbound side of the chat bot, one ChannelTarget for the group.
 *
 * Batching without losing events: the dispatcher calls `accepts` for every event on the
 * publisher's turn and then `send` for each in order, one at a time. `accepts` remembers what is
 * coming, so `send` for the first message.* event of a session can wait (up to the batch window,
 * or until a different event queues behind it) and post it together with the message.* events of
 * the same session that follow it in the queue. Those are marked covered, and their own `send`
 * succeeds at once without posting. Every event stays in the dispatcher's outbox until its own
 * `send` returns, so a crash or a failed post never loses one (at worst, a retry after a crash
 * posts a batch twice). Events resumed from the outbox after a restart were never `accepted` by
 * this process: they go one by one.
 */
export function createChatTarget(deps: ChatTargetDeps): ChannelTarget {
  const { api, topics, groupId, clock, logger, prompts } = deps;
  const windowMs = deps.batchWindowMs ?? BATCH_WINDOW_MS;
  const linkOf = humanLinks(deps.dashboardUrl);
  const seen = new Map<string, { event: AgEvent; at: number }>();
  const covered = new Set<string>();
  const wakers = new Set<() => void>();
  let closed = false;

  function remember(event: AgEvent): void {
    seen.set(keyOf(event), { event, at: clock.now() });
    if (seen.size > MAX_SEEN) seen.delete(seen.keys().next().value!);
    for (const wake of [...wakers]) wake();
  }

  /** Everything queued before `key` has been sent or given up (one delivery at a time, in order). */
  function forgetBefore(key: string): void {
    if (!seen.has(key)) return;
    for (const k of seen.keys()) {
      if (k === key) break;
      seen.delete(k);
    }
  }

  /** The head and the message.* events of its session right behind it; closed when nothing more can join. */
  function runFrom(key: string, head: AgEvent): { events: AgEvent[]; closed: boolean } {
    const events = [head];
    if (!seen.has(key)) return { events, closed: true };
    let after = false;
    for (const [k, { event }] of seen) {
      if (!after) {
        after = k === key;
        continue;
      }
      const joins = isMessageEvent(event) && event.session?.id === head.session?.id;
      if (!joins || events.length >= MAX_BATCH) return { events, closed: true };
      if (formatBatch([...events, event], deps.verbose).length > MAX_MESSAGE_CHARS)
        return { events, closed: true };
      events.push(event);
    }
    return { events, closed: false };
  }

  function nextAccept(ms: number, signal: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        wakers.delete(done);
        cancel();
        signal.removeEventListener("abort", done);
        resolve();
      };
      const cancel = clock.setTimer(done, ms);
      wakers.add(done);
      signal.addEventListener("abort", done);
    });
  }

  async function sendBatch(key: string, head: AgEvent, signal: AbortSignal): Promise<void> {
    const deadline = (seen.get(key)?.at ?? clock.now()) + windowMs;
    let run = runFrom(key, head);
    while (!run.closed && !closed && clock.now() < deadline) {
      await nextAccept(deadline - clock.now(), signal);
      signal.throwIfAborted();
      run = runFrom(key, head);
    }
    const html = formatBatch(run.events, deps.verbose);
    if (html) await post(head.session!, { html }, signal);
    for (const event of run.events.slice(1)) covered.add(keyOf(event));
  }

  async function sendStatus(event: AgEvent, signal: AbortSignal): Promise<void> {
    const session = event.session!;
    await retireStalePrompt(event, signal);
    const text = formatStatus(event, linkOf(event));
    const message = await post(session, text, signal);
    const pending = pendingPermissionOf(event);
    if (text.keyboard && pending?.id)
      prompts.set(session.id, { messageId: message.message_id, permissionId: pending.id });
  }

  /**
   * The buttons of a prompt answered elsewhere (API, dashboard, the terminal) or gone are removed
   * as soon as the session's next status arrives, so nobody presses a dead button. Best effort.
   */
  async function retireStalePrompt(event: AgEvent, signal: AbortSignal): Promise<void> {
    const session = event.session!;
    const open = prompts.get(session.id);
    const pending = pendingPermissionOf(event);
    if (!open || (event.event !== "session.ended" && pending?.id === open.permissionId)) return;
    prompts.delete(session.id);
    await api.removeKeyboard(groupId, open.messageId, signal).catch((error) => {
      logger.debug(`chat: could not remove the buttons of an old prompt: ${(error as Error).message}`);
    });
  }

  async function post(session: EventSession, text: ChatText, signal: AbortSignal): Promise<ChatMessage> {
    const send = (thread: number) =>
      api.sendMessage(
        {
          chat_id: groupId,
          message_thread_id: thread,
          text: text.html,
          parse_mode: "HTML",
          link_preview_options: { is_disabled: true },
          ...(text.keyboard ? { reply_markup: text.keyboard } : {}),
        },
        signal,
      );
    try {
      return await send(await threadOf(session, signal));
    } catch (error) {
      if (!isTopicGone(error)) throw error;
      // Someone deleted the session's topic in the chat: open a new one and post there.
      logger.info(`chat: the topic of session ${session.name} is gone; opening a new one`);
      topics.forget(session.id);
      return await send(await threadOf(session, signal));
    }
  }

  async function threadOf(session: EventSession, signal: AbortSignal): Promise<number> {
    const known = topics.threadOf(session.id);
    if (known !== null) return known;
    const topic = await api.createForumTopic(groupId, topicName(session.name), signal);
    topics.remember(session.id, topic.message_thread_id, new Date(clock.now()).toISOString());
    return topic.message_thread_id;
  }

  return {
    channel: "chat",
    name: `group ${groupId}`,
    timeoutMs: TIMEOUT_MS,
    // Order matters in a conversation, and batching relies on one delivery at a time.
    concurrency: 1,
    accepts(event) {
      if (!isForwarded(event, deps.verbose)) return false;
      remember(event);
      return true;
    },
    async send(delivery, signal) {
      const { event } = delivery;
      const key = keyOf(event);
      if (covered.delete(key)) {
        seen.delete(key);
        return;
      }
      forgetBefore(key);
      if (isMessageEvent(event)) await sendBatch(key, event, signal);
      else await sendStatus(event, signal);
      seen.delete(key);
    },
    close() {
      closed = true;
      for (const wake of [...wakers]) wake();
    },
  };
}

/** Bus ids restart with the process; with the timestamp an event resumed from the outbox cannot collide. */
function keyOf(event: AgEvent): string {
  return `${event.id}@${event.timestamp}`;
}

function isTopicGone(error: unknown): boolean {
  return (
    error instanceof BotApiError &&
    error.status === 400 &&
    /thread not found|TOPIC_DELETED|TOPIC_ID_INVALID/i.test(error.description)
  );
}
