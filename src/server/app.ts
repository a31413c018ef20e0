import { type AnyElysia, Elysia } from "elysia";
import { type AuditLog, createAuditTrail } from "../audit/index.ts";
import type { HealthService } from "../health/service.ts";
import type { HookReceiver } from "../sessions/hooks.ts";
import type { SessionService } from "../sessions/index.ts";
import type { Logger } from "../shared/log.ts";
import { rewriteAlias } from "./aliases.ts";
import { type Actor, createGuard, type SseTokens } from "./auth.ts";
import { parseChunkedBody } from "./body.ts";
import { toErrorBody } from "./errors.ts";
import { buildOpenApi, type RouteInfo } from "./openapi.ts";
import { healthRoutes } from "./routes/health.ts";
import { hookRoutes } from "./routes/hooks.ts";
import { sessionRoutes } from "./routes/sessions.ts";
import { dashboardRoutes } from "./static.ts";

/** CONTRACT §2: a request body is at most 2 MiB. */
export const MAX_BODY_BYTES = 2 * 1024 * 1024;

export interface AppDeps {
  version: string;
  authToken: string;
  allowedHosts: string[];
  dashboard: { enabled: boolean; root: string };
  health: HealthService;
  sessions: SessionService;
  hooks: HookReceiver;
  logger: Logger;
  /** More route plugins; each later domain adds its own. */
  plugins?: AnyElysia[];
  maxBodyBytes?: number;
  /** Where the requests that change things, and every refusal, are recorded. */
  audit?: Pick<AuditLog, "append">;
  /** Verifies SSE tokens (`?token=` on the event streams); none yet, so they are refused. */
  sseTokens?: SseTokens;
}

/** What the listener knows about the client that the request does not carry. */
export interface ClientInfo {
  ip: string | null;
}

export interface HttpApp {
  /** Answers one request, aliases included: what Bun.serve and the tests call. */
  handle(request: Request, client?: ClientInfo): Promise<Response>;
  routes(): ReadonlyArray<{ method: string; path: string }>;
}

export function createApp(deps: AppDeps): HttpApp {
  const maxBodyBytes = deps.maxBodyBytes ?? MAX_BODY_BYTES;
  const guard = createGuard({
    authToken: deps.authToken,
    allowedHosts: deps.allowedHosts,
    maxBodyBytes,
    sseTokens: deps.sseTokens,
  });
  const actors = new WeakMap<Request, Actor>();
  const trail = deps.audit && createAuditTrail(deps.audit);
  let openApi: unknown;
  const routeTable: { current: () => readonly RouteInfo[] } = { current: () => [] };

  const app = new Elysia({ normalize: false })
    .headers({ "x-content-type-options": "nosniff", "cache-control": "no-store" })
    .onError(({ error, code, request, set }) => {
      const body = toErrorBody(error, code, request, deps.logger);
      set.status = body.statusCode;
      if (body.code === "UNAUTHORIZED") set.headers["www-authenticate"] = 'Bearer realm="ag"';
      return body;
    })
    .onRequest(({ request }) => {
      actors.set(request, guard(request));
    })
    .onParse(({ request, contentType }) => parseChunkedBody(request, contentType, maxBodyBytes))
    .use(healthRoutes(deps.health))
    .use(sessionRoutes(deps.sessions))
    .use(hookRoutes(deps.hooks))
    .get(
      "/v1/openapi.json",
      () => (openApi ??= buildOpenApi(routeTable.current(), { version: deps.version })),
      {
        detail: { summary: "This API as OpenAPI 3.1, generated from the route schemas", tags: ["meta"] },
      },
    );
  if (deps.dashboard.enabled) app.use(dashboardRoutes(deps.dashboard.root));
  for (const plugin of deps.plugins ?? []) app.use(plugin);
  routeTable.current = () => app.routes as unknown as RouteInfo[];

  return {
    async handle(request, client) {
      const routed = rewriteAlias(request);
      const response = await app.handle(routed);
      if (trail) {
        const path = new URL(routed.url).pathname;
        const party = {
          actor: actors.get(routed) ?? "unauthenticated",
          tenantId: null,
          ip: client?.ip ?? null,
        };
        try {
          await trail.record(
            { method: routed.method, path, status: response.status, body: () => response.clone().json() },
            party,
          );
        } catch (error) {
          deps.logger.error(`audit record of ${routed.method} ${path} failed`, error);
        }
      }
      return response;
    },
    routes: () => app.routes,
  };
}
