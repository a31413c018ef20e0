import { createHash, timingSafeEqual } from "node:crypto";
import { AgError } from "../shared/errors.ts";

/**
 * Who may talk to ag, decided before routing so that an unknown route tells a stranger nothing.
 *
 * - With a token: every request but PUBLIC_ROUTES must carry `Authorization: Bearer <token>`
 *   (the event streams may instead carry an SSE token that `sseTokens` verifies).
 * - Without one: requests are served only for loopback host names or the configured ones (a
 *   DNS-rebinding page gets a 403), and a browser request from another origin is refused, so a
 *   web page cannot drive the agents on this machine.
 */

export interface GuardOptions {
  authToken: string;
  /** Host names besides loopback that name this server (SVC_HOST, SVC_BASE_URL, SVC_DASHBOARD_URL). */
  allowedHosts: string[];
  maxBodyBytes: number;
  /** Verifies `?token=` on the event streams; without it such tokens are refused. */
  sseTokens?: SseTokens;
}

/**
 * The seam for SSE tokens (`POST /v1/auth/sse-token`): EventSource cannot send a header, so the
 * event streams also accept `?token=`, but only when no valid bearer token came with the request.
 * `verify` may consume the token (they are single use).
 */
export interface SseTokens {
  verify(token: string): boolean;
}

/** The routes that accept an SSE token: GET of the event streams, nothing else. */
export function isEventStreamRoute(method: string, path: string): boolean {
  return method === "GET" && (path === "/v1/events" || /^\/v1\/sessions\/[^/]+\/events$/.test(path));
}

/**
 * Served without a token: the health probe, and the dashboard's static shell (it holds no data;
 * it asks the user for the token and keeps it in memory).
 */
const PUBLIC_ROUTES: ReadonlyArray<(method: string, path: string) => boolean> = [
  (method, path) => method === "GET" && path === "/v1/health",
  (method, path) =>
    (method === "GET" || method === "HEAD") && (path === "/dashboard" || path.startsWith("/dashboard/")),
];

export function isPublicRoute(method: string, path: string): boolean {
  return PUBLIC_ROUTES.some((isPublic) => isPublic(method, path));
}

/** Who a request is: the master token holder, or a local caller when ag runs without a token. */
export type Actor = "master" | "local" | "anonymous" | "sse-token";

/** Refuses a request (throws) or names who is asking. */
export function createGuard(options: GuardOptions): (request: Request) => Actor {
  const expected = options.authToken ? digest(options.authToken) : null;
  const hosts = new Set(options.allowedHosts.map((h) => h.toLowerCase()).filter((h) => !isWildcard(h)));

  return (request) => {
    const length = Number(request.headers.get("content-length") ?? 0);
    if (length > options.maxBodyBytes) {
      throw new AgError(
        "PAYLOAD_TOO_LARGE",
        `request body is ${length} bytes; the limit is ${options.maxBodyBytes}`,
      );
    }
    if (expected) {
      const url = new URL(request.url);
      if (isPublicRoute(request.method, url.pathname)) return "anonymous";
      const presented = bearerToken(request.headers.get("authorization"));
      if (presented !== null && timingSafeEqual(digest(presented), expected)) return "master";
      const sseToken = isEventStreamRoute(request.method, url.pathname)
        ? url.searchParams.get("token")
        : null;
      if (sseToken !== null) {
        if (options.sseTokens?.verify(sseToken)) return "sse-token";
        throw new AgError(
          "UNAUTHORIZED",
          options.sseTokens ? "invalid SSE token" : "SSE tokens are not enabled",
        );
      }
      throw new AgError("UNAUTHORIZED", presented === null ? "missing bearer token" : "invalid bearer token");
    }
    const hostHeader = request.headers.get("host") ?? new URL(request.url).host;
    const host = hostName(hostHeader);
    if (!isLoopbackName(host) && !hosts.has(host)) {
      throw new AgError(
        "FORBIDDEN",
        `host "${host}" is not served without SVC_AUTH_TOKEN; use a loopback address`,
      );
    }
    const origin = request.headers.get("origin");
    if (origin !== null && !isSameOrigin(origin, hostHeader)) {
      throw new AgError(
        "FORBIDDEN",
        `cross-origin requests from ${origin} are refused without SVC_AUTH_TOKEN`,
      );
    }
    return "local";
  };
}

function digest(value: string): Buffer {
  return createHash("sha256").update(value).digest();
}

function bearerToken(header: string | null): string | null {
  const match = header?.match(/^Bearer\s+(\S+)\s*$/i);
  return match?.[1] ?? null;
}

/** "Host: [::1]:9100" → "::1"; "LOCALHOST:9100" → "localhost". */
export function hostName(hostHeader: string): string {
  const host = hostHeader.trim().toLowerCase();
  if (host.startsWith("[")) return host.slice(1, host.indexOf("]"));
  const colon = host.lastIndexOf(":");
  return colon === -1 ? host : host.slice(0, colon);
}

export function isLoopbackName(host: string): boolean {
  return (
    host === "localhost" ||
    host.endsWith(".localhost") ||
    host === "::1" ||
    /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host)
  );
}

function isWildcard(host: string): boolean {
  return host === "0.0.0.0" || host === "::" || host === "";
}

/** Only the dashboard's own origin may call the API from a browser ("null" origins never). */
function isSameOrigin(origin: string, hostHeader: string): boolean {
  try {
    return new URL(origin).host === new URL(`http://${hostHeader}`).host;
  } catch {
    return false;
  }
}
