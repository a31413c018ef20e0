import { AgError } from "../shared/errors.ts";
import { DEFAULT_HEIGHT, DEFAULT_WIDTH, MAX_SIZE, MIN_SIZE, type ScreenshotInput } from "./screenshot.ts";

/**
 * Pure rules for what may be captured: a server of the session's own processes on loopback, or
 * an entry of SVC_SCREENSHOT_ALLOW_HOSTS. Decided from the kernel's socket table before the
 * browser starts or anything is asked of the target, and enforced again in the browser at the
 * network layer (chromium.ts), so a redirect, frame or sub-resource cannot leave it either.
 */

export interface Target {
  url: URL;
  width: number;
  height: number;
  fullPage: boolean;
}

/** A listening TCP socket and whether the session's processes hold it (host/sockets.ts). */
export interface Listening {
  address: string;
  port: number;
  owned: boolean;
}

/** An SVC_SCREENSHOT_ALLOW_HOSTS entry: a host, and a port when the entry names one. */
export interface AllowEntry {
  host: string;
  port: number | null;
}

export function toTarget(input: ScreenshotInput): Target {
  return {
    url: checkUrl(input.url),
    width: checkSize("width", input.width ?? DEFAULT_WIDTH),
    height: checkSize("height", input.height ?? DEFAULT_HEIGHT),
    fullPage: checkFullPage(input.fullPage ?? false),
  };
}

/** An http(s) URL, parsed: WHATWG URL parsing folds case and turns 127.1 or 0x7f.1 into 127.0.0.1. */
export function checkUrl(raw: string): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new AgError("VALIDATION_ERROR", `url is not a valid URL: ${JSON.stringify(raw.slice(0, 200))}`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new AgError("VALIDATION_ERROR", `url must be http or https, not ${url.protocol.slice(0, -1)}`);
  }
  return url;
}

/**
 * `host`, `host:port`, `[v6]` or `[v6]:port`; a bare IPv6 address (two colons or more) is a host
 * of any port. Null for what is none of these.
 */
export function parseAllowEntry(raw: string): AllowEntry | null {
  const entry = raw.trim();
  const bracketed = /^\[([0-9A-Fa-f:.]+)\](?::(\d{1,5}))?$/.exec(entry);
  if (bracketed) return withPort(`[${bracketed[1]}]`, bracketed[2]);
  if ((entry.match(/:/g) ?? []).length >= 2)
    return /^[0-9A-Fa-f:.]+$/.test(entry) ? withPort(`[${entry}]`) : null;
  const named = /^([A-Za-z0-9._-]+)(?::(\d{1,5}))?$/.exec(entry);
  return named ? withPort(named[1]!, named[2]) : null;
}

/** The host as a URL spells it (`127.1` is 127.0.0.1, `0:0::1` is ::1), so entries compare with URLs. */
function withPort(written: string, port?: string): AllowEntry | null {
  let host: string;
  try {
    host = hostOf(new URL(`http://${written}/`));
  } catch {
    return null;
  }
  if (port === undefined) return { host, port: null };
  const n = Number(port);
  return n >= 1 && n <= 65_535 ? { host, port: n } : null;
}

/** What a capture may reach: its target was admitted; `bypass` is the browser's direct list. */
export interface Reach {
  bypass: string[];
}

/**
 * Admits the URL when an allow entry names its host (and port, if the entry has one), or when it
 * is a loopback URL that only the session's processes answer. Refused otherwise, in the same
 * words whether or not anything listens there: the refusal is no probe of the machine.
 */
export function admit(
  url: URL,
  allow: readonly AllowEntry[],
  listeners: readonly Listening[],
  sessionId: string,
): Reach {
  const host = hostOf(url);
  const port = portOf(url);
  const allowed = allow.some((e) => e.host === host && (e.port === null || e.port === port));
  if (!allowed && !(isLoopbackHost(host) && servedBySession(host, port, listeners))) {
    throw new AgError(
      "SCREENSHOT_TARGET_DENIED",
      `${url.protocol}//${url.host} is not a server of session ${sessionId} (a port its agent's processes listen on, on loopback) and not in SVC_SCREENSHOT_ALLOW_HOSTS`,
    );
  }
  return { bypass: [...allow.flatMap(allowPatterns), ...sessionPatterns(listeners)] };
}

/** The addresses a connection to a loopback host may go to. */
function addressesOf(host: string): string[] {
  return host === "localhost" ? ["127.0.0.1", "::1"] : [host];
}

/** Whether a socket bound to `bound` takes a connection to `address` (a wildcard takes any). */
function answers(bound: string, address: string): boolean {
  if (bound === address || bound === "::") return true;
  return !address.includes(":") && (bound === "0.0.0.0" || bound === `::ffff:${address}`);
}

/**
 * Something listens where the host and port lead, and every socket that could answer there is
 * the session's: a port the session shares with another program (SO_REUSEPORT, or one on ::1
 * and the other on 127.0.0.1 behind `localhost`) is not the session's alone.
 */
export function servedBySession(host: string, port: number, listeners: readonly Listening[]): boolean {
  const addresses = addressesOf(normalizeHost(host));
  const candidates = listeners.filter((l) => l.port === port && addresses.some((a) => answers(l.address, a)));
  return candidates.length > 0 && candidates.every((l) => l.owned);
}

/** The session's own servers as direct entries of the browser's proxy bypass list. */
function sessionPatterns(listeners: readonly Listening[]): string[] {
  const patterns = new Set<string>();
  for (const l of listeners) {
    if (!l.owned) continue;
    const hosts =
      l.address === "0.0.0.0"
        ? ["127.0.0.1"]
        : l.address === "::"
          ? ["127.0.0.1", "::1"]
          : isLoopbackHost(l.address)
            ? [l.address]
            : [];
    for (const host of [...hosts, "localhost"])
      if (servedBySession(host, l.port, listeners)) patterns.add(pattern(host, l.port));
  }
  return [...patterns];
}

/** An allow entry in the bypass list; `localhost` also as the addresses Chromium connects to. */
function allowPatterns(entry: AllowEntry): string[] {
  const hosts = entry.host === "localhost" ? ["localhost", "127.0.0.1", "::1"] : [entry.host];
  return hosts.map((host) => pattern(host, entry.port));
}

function pattern(host: string, port: number | null): string {
  const h = host.includes(":") ? `[${host}]` : host;
  return port === null ? h : `${h}:${port}`;
}

/** localhost, 127.0.0.0/8 and ::1: names and addresses that never leave the machine. */
export function isLoopbackHost(host: string): boolean {
  const h = normalizeHost(host);
  return h === "localhost" || h === "::1" || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(h);
}

/** A URL's host without IPv6 brackets. */
export function hostOf(url: URL): string {
  return normalizeHost(url.hostname);
}

/** The URL's port, or its scheme's. */
export function portOf(url: URL): number {
  return url.port ? Number(url.port) : url.protocol === "https:" ? 443 : 80;
}

/** Lower case, no IPv6 brackets, no trailing dot: the form hosts are compared in. */
export function normalizeHost(host: string): string {
  return host
    .trim()
    .toLowerCase()
    .replace(/^\[(.*)\]$/, "$1")
    .replace(/\.$/, "");
}

function checkSize(name: "width" | "height", value: unknown): number {
  if (typeof value !== "number" || !Number.isInteger(value) || value < MIN_SIZE || value > MAX_SIZE) {
    throw new AgError(
      "VALIDATION_ERROR",
      `${name} must be an integer from ${MIN_SIZE} to ${MAX_SIZE} (got ${JSON.stringify(value)})`,
    );
  }
  return value;
}

function checkFullPage(value: unknown): boolean {
  if (typeof value !== "boolean") {
    throw new AgError("VALIDATION_ERROR", `fullPage must be true or false (got ${JSON.stringify(value)})`);
  }
  return value;
}
