import { accessSync, constants, statSync } from "node:fs";
import type { Browser } from "playwright-core";

/** Program names tried on PATH, in order, when no path is configured. */
export const CHROMIUM_COMMANDS = ["chromium", "chromium-browser", "google-chrome"] as const;

/**
 * Flags for a headless Chromium on a machine that may have no network but loopback: no sandbox
 * (ag may run as root or in a container), no GPU, and nothing that reaches for Google's hosts.
 */
export const CHROMIUM_ARGS = [
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
] as const;

/** A proxy that does not exist: port 1 (tcpmux) is one nothing serves in practice. */
export const NO_PROXY_SERVER = "http://127.0.0.1:1";

/**
 * Every request the browser makes goes through a proxy that does not exist, except those to the
 * bypass list. At launch the list is empty; each capture's browser context gets its own (the
 * session's servers and the allow list: target.ts `admit`). This holds for redirects, frames,
 * sub-resources and IP literals alike, which Playwright's request routing does not see (it
 * misses redirect hops). `<-loopback>` drops Chromium's implicit bypass of localhost and
 * loopback addresses (and of link-local ones such as a cloud metadata endpoint).
 */
export function networkLockArgs(): string[] {
  return [
    `--proxy-server=${NO_PROXY_SERVER}`,
    "--proxy-bypass-list=<-loopback>",
    // WebRTC would otherwise send UDP around the proxy.
    "--force-webrtc-ip-handling-policy=disable_non_proxied_udp",
  ];
}

/** A capture's context: only `bypass` (host or host:port patterns) is reached directly. */
export function contextProxy(bypass: readonly string[]): { server: string; bypass: string } {
  return { server: NO_PROXY_SERVER, bypass: ["<-loopback>", ...bypass].join(",") };
}

export type Which = (command: string) => string | null;

export type ChromiumLookup = { path: string } | { path: null; reason: string };

/**
 * The configured Chromium (a path, or a program name looked up on PATH), else the first of
 * CHROMIUM_COMMANDS on PATH. A configured value that does not resolve is not silently replaced
 * by another browser: the reason names it.
 */
export function findChromium(configured: string | null, which: Which = Bun.which): ChromiumLookup {
  if (configured) {
    if (configured.includes("/")) {
      return isExecutableFile(configured)
        ? { path: configured }
        : { path: null, reason: `SVC_CHROMIUM_PATH is ${configured}, which is not an executable file` };
    }
    const found = which(configured);
    return found
      ? { path: found }
      : { path: null, reason: `SVC_CHROMIUM_PATH is ${configured}, which is not on PATH` };
  }
  for (const command of CHROMIUM_COMMANDS) {
    const found = which(command);
    if (found) return { path: found };
  }
  return {
    path: null,
    reason: `no headless Chromium: none of ${CHROMIUM_COMMANDS.join(", ")} is on PATH; install one or set SVC_CHROMIUM_PATH`,
  };
}

export type Launch = (executablePath: string, args: readonly string[]) => Promise<Browser>;

/**
 * Starts Chromium through playwright-core. The import is lazy: loading playwright-core costs
 * ~300 ms, which neither start-up nor a server that never takes a screenshot should pay. In the
 * compiled binary it lands in its own chunk (build.ts splits).
 */
export const launchChromium: Launch = async (executablePath, args) => {
  const { chromium } = await import("playwright-core");
  // Playwright's own default waits three minutes for a browser that hangs at start.
  return chromium.launch({ executablePath, headless: true, args: [...args], timeout: 30_000 });
};

function isExecutableFile(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return statSync(path).isFile();
  } catch {
    return false;
  }
}
