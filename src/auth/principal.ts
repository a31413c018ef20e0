import type { ApiKey } from "./key.ts";
import type { KeyStore } from "./keys.ts";
import type { Grant } from "./scopes.ts";

/**
 * Who is asking, decided once per request at the HTTP edge:
 * - `master`: the SVC_AUTH_TOKEN holder — every scope, no tenant, not rate limited;
 * - `local`: anyone on loopback when ag runs without a token (the owner's machine);
 * - `key`: an API key, with its scopes and tenant (and its session, for a session's own key);
 * - `sse-token`: a single-use token minted by a key or the master, carrying its scopes and tenant;
 * - `hook`: an agent's hook callback, which its per-session secret authenticates further in;
 * - `anonymous`: a public route (health, the dashboard shell) without credentials.
 */
export interface Principal {
  kind: "master" | "local" | "key" | "sse-token" | "hook" | "anonymous";
  /** The name in audit records: `master`, `local`, `key:<name>`, … */
  actor: string;
  scopes: Grant;
  tenantId: string | null;
  /**
   * A session's own key (offerMcp): the session it belongs to. It reaches only that session and
   * the sessions created from it, whatever the tenant (src/sessions/lineage.ts).
   */
  sessionId: string | null;
  /** The API key behind a key or an SSE token, for rate limiting. */
  keyId: string | null;
}

export const MASTER: Principal = {
  kind: "master",
  actor: "master",
  scopes: "all",
  tenantId: null,
  sessionId: null,
  keyId: null,
};
export const LOCAL: Principal = {
  kind: "local",
  actor: "local",
  scopes: "all",
  tenantId: null,
  sessionId: null,
  keyId: null,
};
export const HOOK: Principal = {
  kind: "hook",
  actor: "hook",
  scopes: new Set(),
  tenantId: null,
  sessionId: null,
  keyId: null,
};
export const ANONYMOUS: Principal = {
  kind: "anonymous",
  actor: "anonymous",
  scopes: new Set(),
  tenantId: null,
  sessionId: null,
  keyId: null,
};

export function keyPrincipal(key: ApiKey): Principal {
  return {
    kind: "key",
    actor: `key:${key.name}`,
    scopes: new Set(key.scopes),
    tenantId: key.tenantId,
    sessionId: key.sessionId,
    keyId: key.id,
  };
}

/**
 * The holder's rights as they are now: a key's current scopes, tenant and session (kind and actor kept),
 * or null once its key is revoked or expired. The master and local holders do not change.
 */
export function currentPrincipal(holder: Principal, keys: Pick<KeyStore, "active">): Principal | null {
  if (holder.keyId === null) return holder;
  const key = keys.active(holder.keyId);
  return key && { ...holder, scopes: new Set(key.scopes), tenantId: key.tenantId, sessionId: key.sessionId };
}

/**
 * Who each request in flight is, set by the HTTP edge before routing. Keyed by the request
 * object itself, so it lives exactly as long as the request; a request the edge never saw
 * (a bug) counts as anonymous: no scopes.
 */
const principals = new WeakMap<Request, Principal>();

export function bindPrincipal(request: Request, principal: Principal): void {
  principals.set(request, principal);
}

export function principalOf(request: Request): Principal {
  return principals.get(request) ?? ANONYMOUS;
}
