import type { Config } from "../config/schema.ts";
import type { ChannelTarget } from "./channel.ts";
import { createEmailTarget } from "./email.ts";
import { createTeamchatTarget } from "./teamchat.ts";
import { createWebhookTarget, webhookName } from "./webhook.ts";

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
  // The same URL twice is two hooks (other filters, other headers): each needs its own name.
  const seen = new Map<string, number>();
  const targets = config.webhooks.map((hook) => {
    const base = webhookName(hook.url);
    const n = (seen.get(base) ?? 0) + 1;
    seen.set(base, n);
    return createWebhookTarget(hook, {
      ...options,
      dashboardUrl: config.dashboardUrl,
      name: n === 1 ? base : `${base}-${n}`,
    });
  });
  if (config.teamchatWebhookUrl) {
    targets.push(
      createTeamchatTarget({
        url: config.teamchatWebhookUrl,
        events: config.teamchatEvents,
        channel: config.teamchatChannel,
        timeoutMs: config.teamchatTimeoutMs,
        dashboardUrl: config.dashboardUrl,
        version: options.version,
      }),
    );
  }
  if (config.emailHost) {
    targets.push(
      createEmailTarget({
        host: config.emailHost,
        port: config.emailPort,
        secure: config.emailSecure,
        user: config.emailUser,
        pass: config.emailPass,
        from: config.emailFrom,
        to: config.emailTo,
        events: config.emailEvents,
        timeoutMs: config.emailTimeoutMs,
        dashboardUrl: config.dashboardUrl,
      }),
    );
  }
  return targets;
}
