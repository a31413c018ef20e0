import { Type } from "@sinclair/typebox";
import { Elysia } from "elysia";
import { HOOK_SECRET_HEADER, type HookReceiver } from "../../sessions/index.ts";

/** The only agent ag ran before hook routes named theirs. */
const LEGACY_AGENT = "claude";

const Payload = Type.Record(Type.String(), Type.Unknown(), {
  description: "the agent's own hook payload (its adapter reads it)",
});

/**
 * Agent hook callbacks, one route per agent: authenticated by the session's own secret, not the
 * bearer token. `/v1/hooks/<event>` (one segment) is Claude Code's route of ag versions before
 * the agent registry: sessions launched by them still call it after an upgrade. (The router
 * wants one parameter name per position, so that segment is named `agent` there too.)
 */
export function hookRoutes(hooks: HookReceiver) {
  const secretOf = (request: Request) => request.headers.get(HOOK_SECRET_HEADER);
  return new Elysia({ name: "routes/hooks" })
    .post(
      "/v1/hooks/:agent/:event",
      ({ params, body, request }) => hooks.receive(params.agent, params.event, secretOf(request), body),
      {
        params: Type.Object({ agent: Type.String(), event: Type.String() }),
        body: Payload,
        detail: { summary: "Agent hook callback (per-session secret header)", tags: ["hooks"] },
      },
    )
    .post(
      "/v1/hooks/:agent",
      ({ params, body, request }) => hooks.receive(LEGACY_AGENT, params.agent, secretOf(request), body),
      {
        params: Type.Object({ agent: Type.String({ description: "the hook event" }) }),
        body: Payload,
        detail: { summary: "Claude Code hook callback of sessions an earlier ag launched", tags: ["hooks"] },
      },
    );
}
