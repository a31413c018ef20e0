import type { Principal } from "../../auth/principal.ts";
import { grants, type Scope } from "../../auth/scopes.ts";
import { AgError } from "../../shared/errors.ts";

/**
 * Which scope every route needs (CONTRACT §4), by the route's own path as the router knows it.
 * The app refuses to start with a route that is missing here, so no route is ever added open.
 *
 * - a domain: GET (and HEAD) need `<domain>:read`, other methods `<domain>:write`;
 * - `only(scope)`: that scope for every method (POSTs that only compute or read);
 * - `authenticated`: any valid credential (describing the API is not a resource);
 * - `public` / `hook`: the guard decides (health and the dashboard shell; hook secrets).
 */
export type RouteScope =
  | { read: Scope; write: Scope }
  | { kind: "authenticated" }
  | { kind: "public" }
  | { kind: "hook" };

const domain = (name: "sessions" | "memory" | "templates" | "pipelines"): RouteScope => ({
  read: `${name}:read`,
  write: `${name}:write`,
});
const only = (scope: Scope): RouteScope => ({ read: scope, write: scope });
const SESSIONS = domain("sessions");
const ADMIN = only("admin");
const AUTHENTICATED: RouteScope = { kind: "authenticated" };
const PUBLIC: RouteScope = { kind: "public" };

export const ROUTE_SCOPES: Readonly<Record<string, RouteScope>> = {
  "/v1/health": PUBLIC,
  "/dashboard": PUBLIC,
  "/dashboard/*": PUBLIC,
  "/v1/hooks/:agent": { kind: "hook" },
  "/v1/hooks/:agent/:event": { kind: "hook" },

  "/v1/openapi.json": AUTHENTICATED,
  "/v1/tools": AUTHENTICATED,
  "/v1/handshake": AUTHENTICATED,

  "/v1/sessions": SESSIONS,
  "/v1/sessions/stats": SESSIONS,
  "/v1/sessions/batch": SESSIONS,
  "/v1/sessions/:id": SESSIONS,
  "/v1/sessions/:id/fork": SESSIONS,
  "/v1/sessions/:id/spawn": SESSIONS,
  "/v1/sessions/:id/resume": SESSIONS,
  "/v1/sessions/:id/send": SESSIONS,
  "/v1/sessions/:id/approve": SESSIONS,
  "/v1/sessions/:id/reject": SESSIONS,
  "/v1/sessions/:id/answer": SESSIONS,
  "/v1/sessions/:id/interrupt": SESSIONS,
  "/v1/sessions/:id/escape": SESSIONS,
  "/v1/sessions/:id/wake": SESSIONS,
  "/v1/sessions/:id/read": SESSIONS,
  "/v1/sessions/:id/transcript/cursor": SESSIONS,
  "/v1/sessions/:id/permissions": SESSIONS,
  "/v1/sessions/:id/permission-profile": SESSIONS,
  "/v1/sessions/:id/health": SESSIONS,
  "/v1/sessions/:id/summary": SESSIONS,
  "/v1/sessions/:id/metrics": SESSIONS,
  "/v1/sessions/:id/latency": SESSIONS,
  "/v1/sessions/:id/pane": SESSIONS,
  "/v1/sessions/:id/screenshot": only("sessions:read"),
  "/v1/sessions/:id/verify": only("sessions:write"),
  "/v1/sessions/:id/events": SESSIONS,
  "/v1/sessions/:id/terminal": SESSIONS,
  "/v1/sessions/:id/memories": domain("memory"),
  "/v1/sessions/:id/budget": SESSIONS,
  "/v1/sessions/:id/budget/stop": SESSIONS,
  "/v1/sessions/:id/handoff": SESSIONS,
  "/v1/budgets": SESSIONS,
  "/v1/budgets/:scope": ADMIN,
  "/v1/sessions/:id/checkpoints": SESSIONS,
  "/v1/sessions/:id/checkpoints/:turn/diff": SESSIONS,
  "/v1/sessions/:id/checkpoints/:turn/rewind-diff": SESSIONS,
  "/v1/sessions/:id/rewind": SESSIONS,
  "/v1/events": SESSIONS,
  "/v1/swarm": SESSIONS,
  "/v1/agents": SESSIONS,
  "/v1/admission": SESSIONS,
  "/v1/metrics": SESSIONS,
  "/metrics": SESSIONS,
  "/v1/dev/route-task": only("sessions:read"),
  "/v1/dev/model-tiers": SESSIONS,
  "/v1/auth/sse-token": only("sessions:read"),
  "/v1/fleet": SESSIONS,

  "/v1/memory": domain("memory"),
  "/v1/memory/*": domain("memory"),
  "/v1/memories": domain("memory"),

  "/v1/templates": domain("templates"),
  "/v1/templates/:id": domain("templates"),

  "/v1/sessions/:id/consensus": SESSIONS,
  "/v1/consensus": SESSIONS,
  "/v1/consensus/:id": SESSIONS,

  "/v1/pipelines": domain("pipelines"),
  "/v1/pipelines/:id": domain("pipelines"),

  "/v1/auth/keys": ADMIN,
  "/v1/auth/keys/:id": ADMIN,
  "/v1/audit": ADMIN,
  "/v1/audit/verify": ADMIN,
  "/v1/diagnostics": ADMIN,
  "/v1/untracked": ADMIN,
  "/v1/untracked/:sessionId": ADMIN,
  "/v1/untracked/:sessionId/adopt": ADMIN,
  "/v1/channels/health": ADMIN,
  "/v1/webhooks/dead-letter": ADMIN,
  "/v1/channels/:channel/dead-letters/retry": ADMIN,
  "/v1/channels/:channel/dead-letters": ADMIN,

  "/v1/search": only("sessions:read"),
  "/v1/search/continue": only("sessions:write"),
  "/v1/search/rebuild": ADMIN,
  "/v1/search/import": ADMIN,
};

type ScopeTable = Readonly<Record<string, RouteScope>>;

/** The scope a request to `route` with `method` needs; null when no scope applies. */
export function requiredScope(route: string, method: string, table: ScopeTable = ROUTE_SCOPES): Scope | null {
  const rule = table[route];
  if (!rule) throw new AgError("INTERNAL_ERROR", `route ${route} has no scope`);
  if ("kind" in rule) return null;
  return method === "GET" || method === "HEAD" ? rule.read : rule.write;
}

/** Throws 403 FORBIDDEN, naming the scope, unless `principal` may call `method route`. */
export function authorize(
  principal: Principal,
  route: string,
  method: string,
  table: ScopeTable = ROUTE_SCOPES,
): void {
  const rule = table[route];
  if (rule && "kind" in rule && rule.kind === "authenticated") return;
  const needed = requiredScope(route, method, table);
  if (needed === null || grants(principal.scopes, needed)) return;
  throw new AgError(
    "FORBIDDEN",
    `${principal.actor} lacks the scope ${needed} (needed for ${method} ${route})`,
  );
}

/**
 * Server-wide views that cannot be split by tenant: a tenant's key gets a 403 there rather than a
 * look at other tenants' work. So does every `admin` route (audit, diagnostics, channels, dead
 * letters: the server's own machinery, which records every tenant's doings) but the keys, which a
 * tenant's admin key manages for its own tenant only.
 */
const SERVER_WIDE = new Set([
  "/v1/metrics",
  "/metrics",
  "/v1/swarm",
  "/v1/pipelines",
  "/v1/pipelines/:id",
  "/v1/fleet",
]);
const TENANT_ADMIN_ROUTES = new Set(["/v1/auth/keys", "/v1/auth/keys/:id"]);

export function isServerWide(route: string, table: ScopeTable = ROUTE_SCOPES): boolean {
  if (SERVER_WIDE.has(route)) return true;
  return requiredScope(route, "GET", table) === "admin" && !TENANT_ADMIN_ROUTES.has(route);
}

/** The routes of an app that have no scope: start-up refuses to serve with any. */
export function unscopedRoutes(
  routes: ReadonlyArray<{ path: string }>,
  table: ScopeTable = ROUTE_SCOPES,
): string[] {
  return [...new Set(routes.map((r) => r.path).filter((path) => !(path in table)))];
}
