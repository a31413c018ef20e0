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

/**
 * The budget an address spends: an IPv4 address (also when it arrives IPv4-mapped, `::ffff:…`),
 * or an IPv6 address's /64. A host is handed a whole /64, so counting single IPv6 addresses would
 * let it take a fresh budget for every request.
 */
export function addressBudget(ip: string | null): string {
  if (ip === null) return "ip:unknown";
  const address = ip.toLowerCase().replace(/%.*$/, "");
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(address);
  if (mapped) return `ip:${mapped[1]}`;
  if (!address.includes(":")) return `ip:${address}`;
  const [head = "", tail] = address.split("::");
  const left = head ? head.split(":") : [];
  const right = tail ? tail.split(":") : [];
  // An embedded dotted IPv4 tail takes two groups.
  const width = (groups: string[]) => groups.reduce((n, g) => n + (g.includes(".") ? 2 : 1), 0);
  const zeros =
    tail === undefined ? [] : Array<string>(Math.max(0, 8 - width(left) - width(right))).fill("0");
  const groups = [...left, ...zeros, ...right].slice(0, 4).map((g) => g.replace(/^0+(?=.)/, ""));
  return `ip:${groups.join(":")}::/64`;
}

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
