import { Type } from "@sinclair/typebox";
import { Elysia } from "elysia";
import { HOOK_SECRET_HEADER, type HookReceiver } from "../../sessions/index.ts";

/** Agent hook callbacks: authenticated by the session's own secret, not the bearer token. */
export function hookRoutes(hooks: HookReceiver) {
  return new Elysia({ name: "routes/hooks" }).post(
    "/v1/hooks/:event",
    ({ params, body, request }) =>
      hooks.receive(params.event, request.headers.get(HOOK_SECRET_HEADER), body as Record<string, unknown>),
    {
      params: Type.Object({ event: Type.String() }),
      body: Type.Object({ session_id: Type.String() }, { additionalProperties: true }),
      detail: { summary: "Agent hook callback (per-session secret header)", tags: ["hooks"] },
    },
  );
}
