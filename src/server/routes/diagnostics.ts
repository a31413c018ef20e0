import { Elysia, t } from "elysia";
import { DIAGNOSTICS_SIZE, type Diagnostics, DiagnosticsResponse } from "../../diagnostics/index.ts";
import { wholeNumberQuery } from "./params.ts";

/** Recent internal events (tmux, deliveries, hooks, state changes): live debugging, not history. */
export function diagnosticsRoutes(diagnostics: Diagnostics) {
  return new Elysia({ name: "routes/diagnostics" }).get(
    "/v1/diagnostics",
    ({ query }) => diagnostics.list(query.limit),
    {
      query: t.Object({
        limit: t.Optional(wholeNumberQuery({ minimum: 1, maximum: DIAGNOSTICS_SIZE, default: 50 })),
      }),
      response: DiagnosticsResponse,
      detail: {
        summary: "The newest internal events, newest first (no prompts, output, tokens or paths)",
        tags: ["diagnostics"],
      },
    },
  );
}
