import { createHash, randomBytes } from "node:crypto";
import type { Clock } from "../shared/clock.ts";
import type { KeyStore } from "./keys.ts";
import { currentPrincipal, type Principal } from "./principal.ts";

/** CONTRACT §4: an SSE token lives 60 s and opens one stream. */
export const SSE_TOKEN_TTL_MS = 60_000;
/** Outstanding tokens kept at most; past this the oldest are dropped (a client minting in a loop). */
const MAX_OUTSTANDING = 10_000;

export interface SseTokenStore {
  issue(holder: Principal): { token: string; expiresAt: number; ttlMs: number };
  /** The principal a token stands for, once: a second use, or a late one, gets null. */
  consume(token: string): Principal | null;
}

/**
 * SSE tokens exist because EventSource cannot send a header. They live in memory only: a
 * restart of ag ends them, which costs a client one more POST. The key that minted a token is
 * looked up again when it is used, so a revoked key's tokens die with it.
 */
export function createSseTokenStore(deps: {
  clock: Pick<Clock, "now">;
  keys: Pick<KeyStore, "active">;
  ttlMs?: number;
}): SseTokenStore {
  const ttl = deps.ttlMs ?? SSE_TOKEN_TTL_MS;
  const tokens = new Map<string, { holder: Principal; expiresAt: number }>();

  function sweep(now: number): void {
    for (const [hash, entry] of tokens) if (entry.expiresAt <= now) tokens.delete(hash);
    while (tokens.size >= MAX_OUTSTANDING) tokens.delete(tokens.keys().next().value!);
  }

  return {
    issue(holder) {
      const now = deps.clock.now();
      sweep(now);
      const token = `ags_${randomBytes(32).toString("base64url")}`;
      const expiresAt = now + ttl;
      tokens.set(digest(token), { holder, expiresAt });
      return { token, expiresAt, ttlMs: ttl };
    },
    consume(token) {
      const hash = digest(token);
      const entry = tokens.get(hash);
      if (!entry) return null;
      tokens.delete(hash);
      if (entry.expiresAt <= deps.clock.now()) return null;
      // The minting key as it is now: its current scopes, or nobody once it is gone.
      const now = currentPrincipal(entry.holder, deps.keys);
      return now && { ...now, kind: "sse-token", actor: `sse-token(${now.actor})` };
    },
  };
}

function digest(token: string): string {
  return createHash("sha256").update(token).digest("hex");
}
