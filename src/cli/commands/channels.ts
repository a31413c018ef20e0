import { defineCommand } from "citty";
import { CHANNEL_NAMES, type ChannelName } from "../../channels/channel.ts";
import type { ChannelHealth } from "../../channels/dispatcher.ts";
import type { DeadLetter } from "../../channels/store.ts";
import { currentAuthToken, loadConfig } from "../../config/load.ts";
import { AgError } from "../../shared/errors.ts";
import { GLOBAL_ARGS, parsePortFlag } from "../args.ts";
import { createApiClient, resolveServerUrl } from "../client.ts";
import { printFields, printJson, printLine } from "../output.ts";

const USAGE = "ag channels [health] | ag channels dlq list [channel] | ag channels dlq retry|clear <channel>";

/** `ag channels …`: channel health and the dead-letter queues of the running server. */
export default defineCommand({
  meta: { name: "channels", description: "Channel health, and dead letters: list, retry or clear them" },
  args: {
    ...GLOBAL_ARGS,
    what: { type: "positional", required: false, description: "health (default) or dlq" },
    verb: { type: "positional", required: false, description: "dlq: list, retry or clear" },
    channel: { type: "positional", required: false, description: CHANNEL_NAMES.join(", ") },
    json: { type: "boolean", description: "Machine-readable output" },
  },
  async run({ args }) {
    const loaded = loadConfig({ configPath: args.config });
    const client = createApiClient({
      baseUrl: resolveServerUrl(loaded, parsePortFlag(args.port)),
      token: () => currentAuthToken(loaded.config),
    });
    const what = args.what ?? "health";
    if (what === "health") {
      const health = await client.get<ChannelHealth[]>("/v1/channels/health");
      if (args.json) return printJson(health);
      if (health.length === 0) return printLine("no channel is configured");
      printFields(
        health.map((h) => [
          h.channel,
          `${h.healthy ? "healthy" : "failing"} · ${h.pendingCount} pending` +
            (h.lastError ? ` · last error: ${h.lastError}` : ""),
        ]),
      );
      return;
    }
    if (what !== "dlq") throw new AgError("USAGE_ERROR", `unknown channels command "${what}" (${USAGE})`);
    const channel = args.channel === undefined ? undefined : channelName(args.channel);
    switch (args.verb ?? "list") {
      case "list": {
        const letters = await client.get<DeadLetter[]>(
          `/v1/webhooks/dead-letter${channel ? `?channel=${channel}` : ""}`,
        );
        if (args.json) return printJson(letters);
        if (letters.length === 0) return printLine("no dead letters");
        for (const l of letters) {
          printLine(
            `${l.failedAt}  ${l.channel}  ${l.event.event}  ${l.target}  (${l.attempts} attempts: ${l.lastError})`,
          );
        }
        return;
      }
      case "retry": {
        const answer = await client.send<{ requeued: number; kept: number }>(
          "POST",
          `/v1/channels/${required(channel)}/dead-letters/retry`,
        );
        if (args.json) return printJson(answer);
        printLine(
          `${answer.requeued} dead letter(s) queued again${answer.kept ? `; ${answer.kept} kept (their target is not configured)` : ""}`,
        );
        return;
      }
      case "clear": {
        const answer = await client.send<{ cleared: number }>(
          "DELETE",
          `/v1/channels/${required(channel)}/dead-letters`,
        );
        if (args.json) return printJson(answer);
        printLine(`${answer.cleared} dead letter(s) cleared`);
        return;
      }
      default:
        throw new AgError("USAGE_ERROR", `unknown dlq command "${args.verb}" (${USAGE})`);
    }
  },
});

function channelName(value: string): ChannelName {
  if ((CHANNEL_NAMES as readonly string[]).includes(value)) return value as ChannelName;
  throw new AgError("USAGE_ERROR", `unknown channel "${value}": one of ${CHANNEL_NAMES.join(", ")}`);
}

function required(channel: ChannelName | undefined): ChannelName {
  if (!channel) throw new AgError("USAGE_ERROR", `name the channel: ${CHANNEL_NAMES.join(", ")} (${USAGE})`);
  return channel;
}
