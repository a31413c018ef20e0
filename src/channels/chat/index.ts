import type { Database } from "bun:sqlite";
import type { Clock } from "../../shared/clock.ts";
import { AgError } from "../../shared/errors.ts";
import type { Logger } from "../../shared/log.ts";
import type { ChannelTarget } from "../channel.ts";
import { createBotApi } from "./api.ts";
import { createInbound, type InboundDeps } from "./inbound.ts";
import { createChatTarget, type OpenPrompts } from "./target.ts";
import { createTopicStore } from "./topics.ts";

export interface ChatChannelOptions {
  token: string;
  groupId: string;
  /** User ids allowed to approve, reject and send from the chat; empty: notify only. */
  allowedUsers: string[];
  /** Origin of the bot API (SVC_CHAT_API_BASE). */
  apiBase: string;
  verbose: boolean;
  /** Where the links of events that need a human point (config `dashboardUrl`). */
  dashboardUrl: string;
  sessions: InboundDeps["sessions"];
  audit?: InboundDeps["audit"];
  budgets?: InboundDeps["budgets"];
  /** Holds the session → topic table (created here on first use). */
  db: Database;
  logger: Logger;
  clock: Clock;
  fetch?: typeof fetch;
  /** Test knobs: the batch window, the long-poll hold and the back-off after failed polls. */
  batchWindowMs?: number;
  pollTimeoutSeconds?: number;
  backoff?: InboundDeps["backoff"];
}

export interface ChatChannel {
  /** Give it to the dispatcher: it owns the outbound queue, retries and dead letters. */
  target: ChannelTarget;
  /** Starts polling for button presses and messages. */
  start(): void;
  close(): Promise<void>;
}

/** The chat-bot channel: outbound through the dispatcher, inbound by long polling. */
export function createChatChannel(options: ChatChannelOptions): ChatChannel {
  if (!options.groupId) {
    throw new AgError("CONFIG_INVALID", "SVC_CHAT_GROUP_ID is required when SVC_CHAT_BOT_TOKEN is set");
  }
  const api = createBotApi({ base: options.apiBase, token: options.token, fetch: options.fetch });
  const topics = createTopicStore(options.db, options.groupId);
  const prompts: OpenPrompts = new Map();
  const shared = {
    api,
    topics,
    prompts,
    groupId: options.groupId,
    clock: options.clock,
    logger: options.logger,
  };
  const target = createChatTarget({
    ...shared,
    verbose: options.verbose,
    dashboardUrl: options.dashboardUrl,
    batchWindowMs: options.batchWindowMs,
  });
  const inbound = createInbound({
    ...shared,
    allowedUsers: options.allowedUsers,
    sessions: options.sessions,
    audit: options.audit,
    budgets: options.budgets,
    pollTimeoutSeconds: options.pollTimeoutSeconds,
    backoff: options.backoff,
  });
  return {
    target,
    start: () => inbound.start(),
    async close() {
      await inbound.close();
      await target.close?.();
    },
  };
}

export { createBotApi } from "./api.ts";
export { createChatTarget } from "./target.ts";
