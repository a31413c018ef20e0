import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import type { ApiKey } from "../auth/key.ts";
import type { Principal } from "../auth/principal.ts";
import { SCOPES, type Scope } from "../auth/scopes.ts";

/**
 * The credential one host shows another when it forwards a caller's request: the receiving
 * host's own fleet secret (kept in the fleet database, never on a command line or in an agent's
 * environment), followed by who the caller is — the scopes, tenant and session its own key
 * carried on the forwarding host — so the owner checks the caller as if it had asked it directly.
 */

export const FLEET_PREFIX = "agf_";

/** A new host secret: 256 random bits, made at every start. */
export function newHostSecret(): string {
  return `${FLEET_PREFIX}${randomBytes(32).toString("base64url")}`;
}

interface OnBehalf {
  /** The forwarding host. */
  h: string;
  /** The caller's actor name there (`master`, `key:ci`). */
  a: string;
  s: readonly Scope[];
  t: string | null;
  k: string | null;
}

/** What a forwarded request carries as its bearer token. */
export function forwardToken(secret: string, from: string, caller: Principal): string {
  const onBehalf: OnBehalf = {
    h: from,
    a: caller.actor,
    s: caller.scopes === "all" ? ["*"] : [...caller.scopes],
    t: caller.tenantId,
    k: caller.sessionId,
  };
  return `${secret}.${Buffer.from(JSON.stringify(onBehalf)).toString("base64url")}`;
}

const SCOPE_SET: ReadonlySet<string> = new Set(SCOPES);

/**
 * The caller a forwarded token names, as a key of its own (`fleet:<host>/<actor>`), or null when
 * the token is not one of this host's. A forged caller needs the secret, which only the fleet
 * database holds.
 */
export function acceptForwarded(token: string, secret: string): ApiKey | null {
  if (!token.startsWith(FLEET_PREFIX)) return null;
  const dot = token.indexOf(".");
  if (dot < 0 || !sameSecret(token.slice(0, dot), secret)) return null;
  let onBehalf: OnBehalf;
  try {
    onBehalf = JSON.parse(Buffer.from(token.slice(dot + 1), "base64url").toString("utf8"));
  } catch {
    return null;
  }
  if (!isOnBehalf(onBehalf)) return null;
  const name = `fleet:${onBehalf.h}/${onBehalf.a}`;
  return {
    id: name,
    name,
    prefix: FLEET_PREFIX,
    scopes: [...onBehalf.s],
    tenantId: onBehalf.t,
    sessionId: onBehalf.k,
    createdAt: new Date(0).toISOString(),
    expiresAt: null,
    lastUsedAt: null,
  };
}

function sameSecret(a: string, b: string): boolean {
  const digest = (v: string) => createHash("sha256").update(v).digest();
  return timingSafeEqual(digest(a), digest(b));
}

function isOnBehalf(value: unknown): value is OnBehalf {
  const v = value as OnBehalf;
  const nullableString = (x: unknown) => x === null || typeof x === "string";
  return (
    typeof v === "object" &&
    v !== null &&
    typeof v.h === "string" &&
    typeof v.a === "string" &&
    Array.isArray(v.s) &&
    v.s.every((s) => SCOPE_SET.has(s)) &&
    nullableString(v.t) &&
    nullableString(v.k)
  );
}
