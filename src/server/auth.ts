import { createHash, timingSafeEqual } from "node:crypto";
import type { KeyStore } from "../auth/keys.ts";
import { ANONYMOUS, HOOK, keyPrincipal, LOCAL, MASTER, type Principal } from "../auth/principal.ts";
import { addressBudget, RateLimitedError, type RateLimiter } from "../auth/rate-limit.ts";
import type { SseTokenStore } from "../auth/sse-tokens.ts";
import { AgError } from "../shared/errors.ts";

/**
 * Who may talk to ag, decided before routing so that an unknown route tells a stranger nothing.
 *
 * - With a token: every request but PUBLIC_ROUTES and agent hooks must carry `Authorization:
 *   Bearer <master token or API key>` (the event streams and the live terminal, which a browser
 *   opens without headers, may instead carry `?token=<SSE token>`; no other credential is read
 *   from a query string). An address that keeps failing is slowed:
 *   past its budget each further wrong credential is a delayed 429; a valid credential is never
 *   held up, and a request with none is a plain 401 that spends nothing (a lock-out would let a
 *   stranger on a shared address lock its owner out, or keep a page from asking for the token).
 * - As the owner's local tool (`local`: no token configured, on loopback or with
 *   allowUnauthenticatedNetwork): requests are served only for loopback host names or the
 *   configured ones (a DNS-rebinding page gets a 403), and a browser request from another origin is
 *   refused, so a web page cannot drive the agents on this machine. A request that changes state
 *   and carries no Origin (not a browser's: browsers always send one) must show ag's own token:
 *   the CLI reads it from the token file. A key presented still narrows scopes.
 */

/** Who must show which token (src/server/access.ts decides it from the config). */
export interface Access {
  mode: "token" | "local";
  token: string;
  /** The file of the token ag generated (named in the banner); null for a configured token. */
  tokenFile: string | null;
}

export interface GuardOptions {
  access: Access;
  /** Host names besides loopback that name this server (SVC_HOST, SVC_BASE_URL, SVC_DASHBOARD_URL). */
  allowedHosts: string[];
  maxBodyBytes: number;
  /** API keys (`Authorization: Bearer agk_…`); without them only the master token is known. */
  keys?: Pick<KeyStore, "authenticate">;
  /** Verifies `?token=` where it is accepted (acceptsQueryToken); without it such tokens are refused. */
  sseTokens?: Pick<SseTokenStore, "consume">;
  /** Counts failed attempts per address; past its budget each failure becomes a slowed 429. */
  failures?: RateLimiter;
}

/** Each failure past the budget waits this much longer than the one before, up to the maximum. */
const AUTH_SLOWDOWN_STEP_MS = 100;
const AUTH_SLOWDOWN_MAX_MS = 2_000;

/**
 * The routes that accept an SSE token as `?token=`: GET of the event streams (EventSource) and of
 * the live terminal (a browser's WebSocket); they cannot send a header. Nothing else.
 */
export function acceptsQueryToken(method: string, path: string): boolean {
  return (
    method === "GET" && (path === "/v1/events" || /^\/v1\/sessions\/[^/]+\/(?:events|terminal)$/.test(path))
  );
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

/** Agent hook callbacks carry the session's secret instead; the hook receiver checks it. */
function isHookRoute(method: string, path: string): boolean {
  return method === "POST" && /^\/v1\/hooks\/[^/]+(\/[^/]+)?$/.test(path);
}

/**
 * Whether a request may change something: every method but GET, HEAD and OPTIONS, and a
 * WebSocket handshake (the live terminal takes keystrokes over it).
 */
export function changesState(request: Request): boolean {
  if (!["GET", "HEAD", "OPTIONS"].includes(request.method)) return true;
  return request.headers.get("upgrade")?.toLowerCase() === "websocket";
}

/** Refuses a request (throws) or names who is asking; `ip` is the peer's address. */
export function createGuard(options: GuardOptions): (request: Request, ip: string | null) => Principal {
  const { access } = options;
  const expected = digest(access.token);
  const hosts = new Set(options.allowedHosts.map((h) => h.toLowerCase()).filter((h) => !isWildcard(h)));
  const where = access.tokenFile ?? "the configured token";

  function refuse(ip: string | null, message: string): never {
    const count = options.failures?.take(addressBudget(ip));
    if (count && !count.allowed) {
      const excess = count.used - count.limit;
      throw new RateLimitedError(count, "too many failed authentication attempts from this address", {
        delayMs: Math.min(AUTH_SLOWDOWN_MAX_MS, AUTH_SLOWDOWN_STEP_MS * excess),
      });
    }
    throw new AgError("UNAUTHORIZED", message);
  }

  /**
   * No credential at all is not a guess: a 401 that spends nothing of the address's budget, so a
   * client failing from the same address cannot keep a page that has no token yet from being
   * told to ask for one (the dashboard's first request goes out without it).
   */
  function missing(message: string): never {
    throw new AgError("UNAUTHORIZED", message);
  }

  /** The bearer's principal (`holder` for the token), null without one; a wrong one is refused. */
  function bearer(request: Request, ip: string | null, holder: Principal): Principal | null {
    const presented = bearerToken(request.headers.get("authorization"));
    if (presented === null) return null;
    if (timingSafeEqual(digest(presented), expected)) return holder;
    const key = options.keys?.authenticate(presented);
    if (key) return keyPrincipal(key);
    return refuse(ip, "invalid bearer token");
  }

  function authenticate(request: Request, url: URL, ip: string | null): Principal {
    refuseForeignSocket(request, url);
    if (isPublicRoute(request.method, url.pathname)) return ANONYMOUS;
    if (isHookRoute(request.method, url.pathname)) return HOOK;
    const holder = bearer(request, ip, MASTER);
    if (holder) return holder;
    const sseToken = acceptsQueryToken(request.method, url.pathname) ? url.searchParams.get("token") : null;
    if (sseToken !== null) {
      if (!options.sseTokens) refuse(ip, "SSE tokens are not enabled");
      return options.sseTokens.consume(sseToken) ?? refuse(ip, "invalid SSE token");
    }
    return missing("missing bearer token");
  }

  function local(request: Request, url: URL, ip: string | null): Principal {
    const hostHeader = request.headers.get("host") ?? url.host;
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
    if (isHookRoute(request.method, url.pathname)) return HOOK;
    // A key presented narrows what its holder may do (and binds a tenant); ag's token is the owner.
    const holder = bearer(request, ip, LOCAL);
    if (holder) return holder;
    if (origin === null && changesState(request)) {
      return missing(
        `a request that changes state without an Origin header needs ag's token: send \`Authorization: Bearer <token>\` with the token in ${where} (the ag CLI reads it there)`,
      );
    }
    return LOCAL;
  }

  return (request, ip) => {
    const length = Number(request.headers.get("content-length") ?? 0);
    if (length > options.maxBodyBytes) {
      throw new AgError(
        "PAYLOAD_TOO_LARGE",
        `request body is ${length} bytes; the limit is ${options.maxBodyBytes}`,
      );
    }
    const url = new URL(request.url);
    return access.mode === "token" ? authenticate(request, url, ip) : local(request, url, ip);
  };
}

function digest(value: string): Buffer {
  return createHash("sha256").update(value).digest();
}

function bearerToken(header: string | null): string | null {
  const match = header?.match(/^Bearer\s+(\S+)\s*$/i);
  return match?.[1] ?? null;
}

/** RFC 9110's Host: a registered name, an IPv4 address or a bracketed IPv6 literal, and a port. */
const HOST_HEADER = /^(?:\[[0-9a-f:.]+\]|[a-z0-9._~!$&'()*+,;=%-]+)(?::\d{0,5})?$/i;

/**
 * Why the request's Host cannot be served, or null. Bun builds `request.url` from the Host
 * header: a malformed one (`[zz]`, `127.999.999.999`, empty, absent on HTTP/1.0) leaves a URL
 * nothing can parse. Says nothing of the value itself.
 */
export function hostProblem(request: Request): string | null {
  const host = request.headers.get("host");
  if (host === "") return "the Host header is empty";
  if (host !== null && !HOST_HEADER.test(host)) return "the Host header is malformed";
  if (!URL.canParse(request.url)) {
    return host === null ? "the request has no Host header" : "the Host header is malformed";
  }
  return null;
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

/** A bind address that means every interface. */
export function isWildcard(host: string): boolean {
  return host === "0.0.0.0" || host === "::" || host === "";
}

/**
 * A browser opens a WebSocket from any page, with no CORS to stop it: with a token the page was
 * given (or a single-use token minted with one) a page elsewhere could watch and type into a
 * terminal. Only ag's own page may, whatever it carries (refused before the credential is read,
 * so a single-use token is not spent); a client that is no browser sends no Origin and is let by.
 */
function refuseForeignSocket(request: Request, url: URL): void {
  const origin = request.headers.get("origin");
  if (origin === null || request.headers.get("upgrade")?.toLowerCase() !== "websocket") return;
  if (isSameOrigin(origin, request.headers.get("host") ?? url.host)) return;
  throw new AgError("FORBIDDEN", `a WebSocket from ${origin} is refused: only ag's own pages may open one`);
}

/** Only the dashboard's own origin may call the API from a browser ("null" origins never). */
function isSameOrigin(origin: string, hostHeader: string): boolean {
  try {
    return new URL(origin).host === new URL(`http://${hostHeader}`).host;
  } catch {
    return false;
  }
}
