import type { Config } from "../config/schema.ts";
import type { ChannelTarget } from "./channel.ts";
import { createWebhookTarget } from "./webhook.ts";

export * from "./channel.ts";
export { ChannelHealth, createDispatcher, type Dispatcher } from "./dispatcher.ts";
export { createChannelStore, DeadLetter } from "./store.ts";

/** Background parts of a channel besides its target (the chat bot's inbound poller). */
export interface ChannelService {
  start(): void;
  close(): Promise<void> | void;
}

/** The channel targets the configuration asks for (none when nothing is configured). */
export function channelTargets(config: Config, options: { version: string }): ChannelTarget[] {
  return config.webhooks.map((hook) => createWebhookTarget(hook, options));
}
