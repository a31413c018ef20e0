import { type AnyElysia, Elysia } from "elysia";
import { type AuditLog, createAuditTrail, isAudited } from "../audit/index.ts";
import type { KeyStore } from "../auth/keys.ts";
import { bindPrincipal, type Principal, principalOf } from "../auth/principal.ts";
import { addressBudget, createRateLimiter, RateLimitedError, rateLimitHeaders } from "../auth/rate-limit.ts";
import type { SseTokenStore } from "../auth/sse-tokens.ts";
import type { HealthService } from "../health/service.ts";
import { type HookReceiver, isConfined, type SessionService } from "../sessions/index.ts";
import { type Clock, systemClock } from "../shared/clock.ts";
import { AgError, describeError } from "../shared/errors.ts";
import { createRepeatFilter, type Logger, repeatsNote } from "../shared/log.ts";
import { storageFault } from "../store/faults.ts";
import type { StorageGuard } from "../store/guard.ts";
import {
  extractContext,
  otelContext,
  otelTrace,
  recordFailure,
  type Span,
  SpanKind,
  SpanStatusCode,
  tracer,
  tracingEnabled,
} from "../telemetry/index.ts";
import { rewriteAlias } from "./aliases.ts";
import { type Access, createGuard, hostProblem } from "./auth.ts";
import { type BodyLimits, DEFAULT_BODY_LIMITS, readBoundedBody } from "./body.ts";
import { jsonEnvelope, toErrorBody } from "./errors.ts";
import { buildOpenApi, type RouteInfo } from "./openapi.ts";
import { healthRoutes } from "./routes/health.ts";
import { hookRoutes } from "./routes/hooks.ts";
import { authorize, isServerWide, ROUTE_SCOPES, type RouteScope, unscopedRoutes } from "./routes/scopes.ts";
import { sessionRoutes } from "./routes/sessions.ts";
import { bindSocketOffer, type SocketOffer } from "./sockets.ts";
import { dashboardRoutes } from "./static.ts";

/** CONTRACT §2: a request body is at most 2 MiB. */
export const MAX_BODY_BYTES = DEFAULT_BODY_LIMITS.bytes;

export interface AppDeps {
  version: string;
  /** Who must show which token (src/server/access.ts). */
  access: Access;
  allowedHosts: string[];
  dashboard: { enabled: boolean; root: string };
  health: HealthService;
  sessions: SessionService;
  hooks: HookReceiver;
  logger: Logger;
  /** More route plugins; each later domain adds its own. */
  plugins?: AnyElysia[];
  maxBodyBytes?: number;
  /** Nesting and members a body may have (src/server/body.ts); the defaults when absent. */
  bodyLimits?: Partial<Pick<BodyLimits, "depth" | "members">>;
  /** Where the requests that change things, and every refusal, are recorded. */
  audit?: Pick<AuditLog, "append">;
  /**
   * The state store's watch: requests that may write are refused while it is faulted (full,
   * unwritable, replaced), audited ones after a probe write; storage faults are reported to it.
   */
  storage?: Pick<StorageGuard, "assertWritable" | "noted">;
  /** API keys; without them only the master token (or no-auth local use) gets in. */
  keys?: Pick<KeyStore, "authenticate">;
  /** Verifies SSE tokens (`?token=` on the event streams); without it they are refused. */
  sseTokens?: Pick<SseTokenStore, "consume">;
  /** Requests per minute per API key (per address when anonymous); 0 = no limit. */
  rateLimitPerMin?: number;
  clock?: Pick<Clock, "now">;
  /** Scopes of routes that plugins add beyond ROUTE_SCOPES (a test's own routes). */
  scopes?: Record<string, RouteScope>;
  /**
   * Runs before every route's handler, once the caller is authorized: an answer it gives is the
   * answer (a fleet member forwards another host's session to it, src/fleet/intercept.ts).
   */
  intercept?: (call: {
    request: Request;
    route: string;
    params: Record<string, string | undefined>;
    body: unknown;
  }) => Promise<Response | undefined>;
}

/** Methods that never change state: never held back by a faulted store. */
const READ_METHODS = new Set(["GET", "HEAD", "OPTIONS"]);

/** Failed authentications an address may make per minute before further failures are slowed. */
export const AUTH_FAILURES_PER_MIN = 20;

/** What the listener knows about the client that the request does not carry. */
export interface ClientInfo {
  ip: string | null;
  /**
   * The request is read and authorized: its handler may take long (a create waits for the
   * agent, a verification runs a build). The listener stops counting the connection idle.
   */
  handling?(): void;
  /** The listener can upgrade this request to a WebSocket (a route that speaks it accepts). */
  socket?: SocketOffer;
}

export interface HttpApp {
  /** Answers one request, aliases included: what Bun.serve and the tests call. */
  handle(request: Request, client?: ClientInfo): Promise<Response>;
  routes(): ReadonlyArray<{ method: string; path: string }>;
}

export function createApp(deps: AppDeps): HttpApp {
  const maxBodyBytes = deps.maxBodyBytes ?? MAX_BODY_BYTES;
  const bodyLimits: BodyLimits = { ...DEFAULT_BODY_LIMITS, ...deps.bodyLimits, bytes: maxBodyBytes };
  const clock = deps.clock ?? systemClock;
  // Lines a stranger can cause at will (a refused body or Host, an unexpected error's stack)
  // are let through once a minute per kind; the next one counts the rest.
  const repeats = createRepeatFilter({ now: () => clock.now() });
  const logOnce = (key: string, write: (note: string) => void) => {
    const held = repeats.admit(key);
    if (held !== null) write(repeatsNote(held));
  };
  const logError = (line: string, error: unknown) =>
    logOnce(`error ${line} ${(error as Error)?.message}`, (note) =>
      deps.logger.error(`${line}${note}`, error),
    );
  function logRefusal(request: Request, ip: string | null | undefined, reason: string): void {
    const where = `${request.method} ${pathOf(request)}`;
    logOnce(`refused ${addressBudget(ip ?? null)} ${reason}`, (note) =>
      deps.logger.warn(`refused ${where} from ${ip ?? "an unknown address"}: ${reason}${note}`),
    );
  }
  const scopes = { ...ROUTE_SCOPES, ...deps.scopes };
  const guard = createGuard({
    access: deps.access,
    allowedHosts: deps.allowedHosts,
    maxBodyBytes,
    keys: deps.keys,
    sseTokens: deps.sseTokens,
    failures: createRateLimiter({ perMinute: AUTH_FAILURES_PER_MIN, clock }),
  });
  const limiter = deps.rateLimitPerMin ? createRateLimiter({ perMinute: deps.rateLimitPerMin, clock }) : null;
  const clients = new WeakMap<Request, ClientInfo>();
  /** Answers held back before they go out (an address that keeps failing to authenticate). */
  const held = new WeakMap<Request, number>();
  /** Each request's SERVER span (tracing on): the hooks that learn its route name it. */
  const spans = new WeakMap<Request, Span>();

  /** `GET /v1/sessions/:id`: the route's pattern, never the concrete path (one name per route). */
  function nameSpan(request: Request, route: string | undefined): void {
    const span = spans.get(request);
    if (!span || !route) return;
    span.updateName(`${request.method} ${route}`);
    span.setAttribute("http.route", route);
  }

  /** Whose budget a request spends: a key's, or an address's when anonymous; the owner's none. */
  function budgetOf(principal: Principal, request: Request): string | null {
    if (principal.keyId !== null) return `key:${principal.keyId}`;
    if (principal.kind === "anonymous") return addressBudget(clients.get(request)?.ip ?? null);
    return null;
  }

  function admit(request: Request, headers: Record<string, unknown>): void {
    const principal = guard(request, clients.get(request)?.ip ?? null);
    bindPrincipal(request, principal);
    const budget = limiter && budgetOf(principal, request);
    if (!budget) return;
    const decision = limiter.take(budget);
    if (decision.allowed) Object.assign(headers, rateLimitHeaders(decision));
    else {
      throw new RateLimitedError(decision, `rate limit of ${decision.limit} requests per minute reached`);
    }
  }

  /**
   * A confined key reaches only its own sessions (a tenant's key its tenant's; a session key its
   * session and the sessions it created): any other is as absent as a missing one.
   */
  function confine(
    principal: Principal,
    route: string,
    params: Record<string, unknown>,
    body: unknown,
  ): void {
    if (!isConfined(principal)) return;
    if (isServerWide(route, scopes)) {
      throw new AgError(
        "FORBIDDEN",
        `${route} is server-wide: not available to a tenant's or a session's key`,
      );
    }
    // Any session it names: in the path, or as a body's sessionId (a template copied from one).
    const named = route.startsWith("/v1/sessions/:id")
      ? params.id
      : (body as { sessionId?: unknown })?.sessionId;
    if (typeof named === "string" && !deps.sessions.sees(principal, named)) {
      throw new AgError("SESSION_NOT_FOUND", `no session ${named}`);
    }
  }
  const trail = deps.audit && createAuditTrail(deps.audit);

  /**
   * A request that may write waits for a store that takes writes: refused (507/503) while it is
   * full, unwritable or replaced, before anything is done. An audited one (a kill, a key, an
   * approval) first writes to the store, so its audit record, written after it, has the room.
   */
  function admitWrite(request: Request): void {
    if (!deps.storage || READ_METHODS.has(request.method)) return;
    deps.storage.assertWritable(trail !== undefined && isAudited(request.method, pathOf(request)));
  }
  let openApi: unknown;
  const routeTable: { current: () => readonly RouteInfo[] } = { current: () => [] };

  const app = new Elysia({ normalize: false })
    .headers({ "x-content-type-options": "nosniff", "cache-control": "no-store" })
    .onError(({ error, code, request, set, route }) => {
      const body = toErrorBody(deps.storage?.noted(error) ?? error, code, request, logError);
      const span = spans.get(request);
      if (span) {
        if (code !== "NOT_FOUND") nameSpan(request, route);
        span.setAttribute("error.type", body.code);
        if (body.statusCode >= 500) recordFailure(span, error);
      }
      set.status = body.statusCode;
      if (body.code === "UNAUTHORIZED") set.headers["www-authenticate"] = 'Bearer realm="ag"';
      const retryAfter = (error instanceof AgError ? error : (error as Error)?.cause) as AgError | undefined;
      if (retryAfter instanceof AgError && retryAfter.retryAfterSeconds !== undefined)
        set.headers["retry-after"] = String(retryAfter.retryAfterSeconds);
      if (error instanceof RateLimitedError) {
        Object.assign(set.headers, rateLimitHeaders(error.decision));
        if (error.options.delayMs) held.set(request, error.options.delayMs);
      }
      return body;
    })
    .onRequest(({ request, set }) => admit(request, set.headers))
    .onTransform(({ request, route, params, body }) => {
      nameSpan(request, route);
      const principal = principalOf(request);
      authorize(principal, route, request.method, scopes);
      confine(principal, route, params, body);
      admitWrite(request);
      clients.get(request)?.handling?.();
    })
    .onParse(async ({ request, contentType }) => {
      try {
        return await readBoundedBody(request, contentType, bodyLimits);
      } catch (error) {
        if (error instanceof AgError) logRefusal(request, clients.get(request)?.ip, error.message);
        throw error;
      }
    })
    .onBeforeHandle(({ request, route, params, body }) =>
      deps.intercept?.({ request, route, params: params as Record<string, string | undefined>, body }),
    )
    .use(healthRoutes(deps.health, deps.access.mode))
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
  const unscoped = unscopedRoutes(app.routes, scopes);
  if (unscoped.length) throw new Error(`routes without a scope in src/server/routes/scopes.ts: ${unscoped}`);

  /**
   * A SERVER span around the whole answer (the audit record included), continuing the caller's
   * trace when it sends a `traceparent`. Named by method alone until the route is known.
   */
  async function traced(request: Request, routed: Request, client?: ClientInfo): Promise<Response> {
    const url = new URL(request.url);
    const parent = extractContext(request.headers);
    const span = tracer.startSpan(
      request.method,
      {
        kind: SpanKind.SERVER,
        attributes: {
          "http.request.method": request.method,
          "url.path": url.pathname,
          "url.scheme": url.protocol.replace(":", ""),
          ...(client?.ip ? { "client.address": client.ip } : {}),
        },
      },
      parent,
    );
    spans.set(routed, span);
    try {
      const response = await otelContext.with(otelTrace.setSpan(parent, span), () => answer(routed, client));
      span.setAttribute("http.response.status_code", response.status);
      // OTel HTTP conventions: a SERVER span fails on 5xx only; a 4xx is the client's (its
      // error.type, the envelope's code, is set all the same).
      if (response.status >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
      return response;
    } catch (error) {
      recordFailure(span, error);
      throw error;
    } finally {
      span.end();
    }
  }

  async function answer(routed: Request, client?: ClientInfo): Promise<Response> {
    const response = await app.handle(routed);
    const delay = held.get(routed);
    if (delay) await Bun.sleep(delay);
    if (trail) {
      const path = new URL(routed.url).pathname;
      const principal = principalOf(routed);
      const party = {
        actor: principal.kind === "anonymous" ? "unauthenticated" : principal.actor,
        tenantId: principal.tenantId,
        ip: client?.ip ?? null,
      };
      try {
        await trail.record(
          { method: routed.method, path, status: response.status, body: () => response.clone().json() },
          party,
        );
      } catch (error) {
        deps.logger.error(`audit record of ${routed.method} ${path} (${response.status}) failed`, error);
        // Never lost in silence: the client hears that its action stands without its record.
        const fault = deps.storage?.noted(error) ?? storageFault(error);
        if (fault && response.status < 400)
          return jsonEnvelope(
            fault.code,
            `${routed.method} ${path} answered ${response.status}, but its audit record could not be written: ${describeError(error)}`,
          );
      }
    }
    return response;
  }

  /** The path for a log line: never the whole of what a stranger sent. */
  function pathOf(request: Request): string {
    // A malformed Host leaves a URL nothing parses: its path is read off the text.
    const path = URL.canParse(request.url)
      ? new URL(request.url).pathname
      : (/^(?:[a-z]+:\/\/[^/]*)?(\/[^?#]*)/i.exec(request.url)?.[1] ?? "/");
    return path.length > 200 ? `${path.slice(0, 200)}…` : path;
  }

  return {
    async handle(request, client) {
      // Before anything reads the URL: a Host that makes no URL (`[zz]`, `127.999.999.999`, none
      // on HTTP/1.0) would throw in every `new URL(request.url)` below, and Bun answered that
      // with its developer page.
      const problem = hostProblem(request);
      if (problem) {
        logRefusal(request, client?.ip, problem);
        return jsonEnvelope("VALIDATION_ERROR", problem);
      }
      const routed = rewriteAlias(request);
      if (client) clients.set(routed, client);
      if (client?.socket) bindSocketOffer(routed, client.socket);
      return tracingEnabled() ? traced(request, routed, client) : answer(routed, client);
    },
    routes: () => app.routes,
  };
}
