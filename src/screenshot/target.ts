import { AgError } from "../shared/errors.ts";
import { DEFAULT_HEIGHT, DEFAULT_WIDTH, MAX_SIZE, MIN_SIZE, type ScreenshotInput } from "./screenshot.ts";

/**
 * Pure rules for what may be captured. The browser enforces the same host list again at the
 * network layer (chromium.ts), so a redirect or a sub-resource cannot leave it either.
 */

export interface Target {
  url: URL;
  width: number;
  height: number;
  fullPage: boolean;
}

export function toTarget(input: ScreenshotInput, allowHosts: readonly string[]): Target {
  return {
    url: checkUrl(input.url, allowHosts),
    width: checkSize("width", input.width ?? DEFAULT_WIDTH),
    height: checkSize("height", input.height ?? DEFAULT_HEIGHT),
    fullPage: checkFullPage(input.fullPage ?? false),
  };
}

export function checkUrl(raw: string, allowHosts: readonly string[]): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new AgError("VALIDATION_ERROR", `url is not a valid URL: ${JSON.stringify(raw)}`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new AgError("VALIDATION_ERROR", `url must be http or https, not ${url.protocol.slice(0, -1)}`);
  }
  // WHATWG URL parsing already folded case and turned 127.1 or 0x7f.1 into 127.0.0.1.
  const host = hostOf(url);
  if (!isLoopbackHost(host) && !allowHosts.map(normalizeHost).includes(host)) {
    throw new AgError(
      "VALIDATION_ERROR",
      `host "${host}" is not allowed: screenshots load loopback URLs only, or hosts listed in SVC_SCREENSHOT_ALLOW_HOSTS`,
    );
  }
  return url;
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
