import { Type } from "@sinclair/typebox";
import { Elysia } from "elysia";
import { CHANNEL_NAMES, ChannelHealth, DeadLetter, type Dispatcher } from "../../channels/index.ts";
import { literalUnion } from "../../shared/schema.ts";

const Channel = literalUnion(CHANNEL_NAMES);
const ChannelParam = Type.Object({ channel: Channel });
const tags = ["channels"];

/** Channel health and the dead letters of every channel (retry or clear them per channel). */
export function channelRoutes(dispatcher: Dispatcher) {
  return new Elysia({ name: "routes/channels" })
    .get("/v1/channels/health", () => dispatcher.health(), {
      response: Type.Array(ChannelHealth),
      detail: {
        summary: "One entry per configured channel: healthy, lastSuccess, lastError, pendingCount",
        tags,
      },
    })
    .get("/v1/webhooks/dead-letter", ({ query }) => dispatcher.deadLetters(query.channel), {
      query: Type.Object({ channel: Type.Optional(Channel) }),
      response: Type.Array(DeadLetter),
      detail: {
        summary: "Deliveries given up, oldest first: every channel's, or one channel's with ?channel=",
        tags,
      },
    })
    .post("/v1/channels/:channel/dead-letters/retry", ({ params }) => dispatcher.retry(params.channel), {
      params: ChannelParam,
      response: Type.Object({ requeued: Type.Integer(), kept: Type.Integer() }),
      detail: {
        summary: "Queue a channel's dead letters again (same delivery ids); 409 if the channel is off",
        tags,
      },
    })
    .delete("/v1/channels/:channel/dead-letters", ({ params }) => dispatcher.clear(params.channel), {
      params: ChannelParam,
      response: Type.Object({ cleared: Type.Integer() }),
      detail: { summary: "Drop a channel's dead letters", tags },
    });
}
