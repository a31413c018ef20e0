import type { Clock } from "../shared/clock.ts";
import { AgError } from "../shared/errors.ts";

/** What one request's take of a budget says: the RateLimit-* headers and, when refused, Retry-After. */
export interface RateDecision {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Seconds until the window starts over. */
  resetSeconds: number;
  /** Requests counted in this window, this one included. */
  used: number;
}

const WINDOW_MS = 60_000;
/** Budgets remembered at most; the oldest are forgotten past this (addresses are unbounded). */
const MAX_KEYS = 50_000;

/**
 * A fixed one-minute window per caller (an API key, or an address when anonymous): simple to
 * reason about, and exactly what RateLimit-Limit/Remaining/Reset describe.
 */
export function createRateLimiter(deps: { perMinute: number; clock: Pick<Clock, "now"> }) {
  const windows = new Map<string, { start: number; used: number }>();

  return {
    /** Counts one request against `key`'s budget. */
    take(key: string): RateDecision {
      const now = deps.clock.now();
      let window = windows.get(key);
      if (!window || now - window.start >= WINDOW_MS) {
        windows.delete(key);
        window = { start: now, used: 0 };
        windows.set(key, window);
        if (windows.size > MAX_KEYS) windows.delete(windows.keys().next().value!);
      }
      window.used++;
      return {
        allowed: window.used <= deps.perMinute,
        used: window.used,
        limit: deps.perMinute,
        remaining: Math.max(0, deps.perMinute - window.used),
        resetSeconds: Math.max(1, Math.ceil((window.start + WINDOW_MS - now) / 1000)),
      };
    },
  };
}

export type RateLimiter = ReturnType<typeof createRateLimiter>;

export function rateLimitHeaders(decision: RateDecision): Record<string, string> {
  const headers: Record<string, string> = {
    "ratelimit-limit": String(decision.limit),
    "ratelimit-remaining": String(decision.remaining),
    "ratelimit-reset": String(decision.resetSeconds),
  };
  if (!decision.allowed) headers["retry-after"] = String(decision.resetSeconds);
  return headers;
}

/** A 429 that carries its budget, so the answer can say when to come back, and how long to hold it. */
export class RateLimitedError extends AgError {
  constructor(
    readonly decision: RateDecision,
    message: string,
    readonly options: { delayMs?: number } = {},
  ) {
    super("RATE_LIMITED", message);
  }
}
