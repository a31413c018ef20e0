import type { Browser } from "playwright-core";
import { AgError, describeError } from "../shared/errors.ts";
import type { Logger } from "../shared/log.ts";
import {
  CHROMIUM_ARGS,
  contextProxy,
  findChromium,
  type Launch,
  launchChromium,
  networkLockArgs,
  type Which,
} from "./chromium.ts";
import type { Screenshot, ScreenshotInput } from "./screenshot.ts";
import { type AllowEntry, admit, type Listening, parseAllowEntry, type Target, toTarget } from "./target.ts";

export interface ScreenshotServiceDeps {
  /** SVC_CHROMIUM_PATH: a path or a program name; null looks on PATH. */
  chromiumPath: string | null;
  /** SVC_SCREENSHOT_ALLOW_HOSTS: `host` or `host:port` entries any session may capture. */
  allowHosts: string[];
  /**
   * Every TCP listener of the machine, each marked owned when the session's processes hold it
   * (the host domain reads it from /proc); the session's own servers are the ones it may capture.
   */
  servers(sessionId: string): Promise<readonly Listening[]>;
  logger: Logger;
  /** Starts the browser; playwright-core by default. */
  launch?: Launch;
  /** Finds a program on PATH; Bun.which by default (tests pass one that finds nothing). */
  which?: Which;
  /** Close the browser after this long without a capture. */
  idleMs?: number;
  /** Bound of the page load, and again of the capture. */
  timeoutMs?: number;
}

export interface ScreenshotService {
  /** Whether a Chromium executable is there to launch (cheap: does not start it). */
  available(): Promise<boolean>;
  /**
   * Loads the URL in a fresh browser context of the given viewport and returns a PNG. Throws
   * SCREENSHOT_TARGET_DENIED for a URL that is neither a server of the session nor allowed (before
   * anything starts or connects) or a page that leads outside them, VALIDATION_ERROR for a URL or
   * size outside the rules or a page that does not load, and SCREENSHOT_UNAVAILABLE when there is
   * no Chromium or it does not start.
   */
  capture(sessionId: string, input: ScreenshotInput): Promise<Screenshot>;
  /** Closes the browser, if one is running (a later capture starts a new one). */
  close(): Promise<void>;
}

export const IDLE_CLOSE_MS = 60_000;
export const LOAD_TIMEOUT_MS = 15_000;
/** Each capture costs a renderer process: more than this many at once wait their turn. */
const MAX_CONCURRENT = 2;

/**
 * One headless Chromium, started on the first capture and shared by later ones (a launch costs
 * ~0.5 s), closed after a minute without captures and on dispose.
 */
export function createScreenshotService(deps: ScreenshotServiceDeps): ScreenshotService {
  const launch = deps.launch ?? launchChromium;
  const which = deps.which ?? Bun.which;
  const idleMs = deps.idleMs ?? IDLE_CLOSE_MS;
  const timeoutMs = deps.timeoutMs ?? LOAD_TIMEOUT_MS;
  const args = [...CHROMIUM_ARGS, ...networkLockArgs()];
  const allow = deps.allowHosts.map(parseAllowEntry).filter((e): e is AllowEntry => e !== null);
  const gate = createGate(MAX_CONCURRENT);
  let browser: Promise<Browser> | null = null;
  let idleTimer: ReturnType<typeof setTimeout> | null = null;
  let active = 0;

  function currentBrowser(): Promise<Browser> {
    if (browser) return browser;
    const found = findChromium(deps.chromiumPath, which);
    if (found.path === null) throw new AgError("SCREENSHOT_UNAVAILABLE", found.reason);
    const path = found.path;
    const starting: Promise<Browser> = launch(path, args).then(
      (started) => {
        deps.logger.info(`screenshot browser started: ${path}`);
        // A crashed browser is replaced at the next capture.
        started.on("disconnected", () => {
          if (browser === starting) browser = null;
        });
        return started;
      },
      (error) => {
        if (browser === starting) browser = null;
        throw new AgError(
          "SCREENSHOT_UNAVAILABLE",
          `Chromium at ${path} did not start: ${firstLine(error)}`,
          {
            cause: error,
          },
        );
      },
    );
    browser = starting;
    return starting;
  }

  async function shoot(target: Target, bypass: readonly string[]): Promise<Screenshot> {
    const context = await (await currentBrowser()).newContext({
      viewport: { width: target.width, height: target.height },
      serviceWorkers: "block",
      proxy: contextProxy(bypass),
    });
    try {
      const page = await context.newPage();
      try {
        await page.goto(target.url.href, { timeout: timeoutMs, waitUntil: "load" });
      } catch (error) {
        throw loadError(target.url, error, timeoutMs);
      }
      let png: Buffer;
      try {
        png = await page.screenshot({ type: "png", fullPage: target.fullPage, timeout: timeoutMs });
      } catch (error) {
        if (!isTimeout(error)) throw error;
        throw new AgError(
          "VALIDATION_ERROR",
          `${target.url.href} did not render within ${seconds(timeoutMs)}`,
        );
      }
      return { mimeType: "image/png", data: png.toString("base64") };
    } finally {
      await context.close().catch(() => {});
    }
  }

  function armIdleClose(): void {
    clearIdleClose();
    if (!browser) return;
    idleTimer = setTimeout(() => {
      idleTimer = null;
      if (active === 0) void closeBrowser("idle");
    }, idleMs);
    idleTimer.unref?.();
  }

  function clearIdleClose(): void {
    if (idleTimer) clearTimeout(idleTimer);
    idleTimer = null;
  }

  async function closeBrowser(reason: string): Promise<void> {
    clearIdleClose();
    const pending = browser;
    browser = null;
    const open = await pending?.catch(() => null);
    if (!open) return;
    await open
      .close()
      .catch((error) => deps.logger.warn(`closing the screenshot browser: ${describeError(error)}`));
    deps.logger.info(`screenshot browser closed (${reason})`);
  }

  return {
    async available() {
      return browser !== null || findChromium(deps.chromiumPath, which).path !== null;
    },
    async capture(sessionId, input) {
      const target = toTarget(input);
      // Decided from the socket table alone: nothing has started or connected yet.
      const reach = admit(target.url, allow, await deps.servers(sessionId), sessionId);
      active++;
      clearIdleClose();
      await gate.enter();
      try {
        return await shoot(target, reach.bypass);
      } finally {
        gate.leave();
        active--;
        if (active === 0) armIdleClose();
      }
    },
    close: () => closeBrowser("dispose"),
  };
}

/** A page that does not load is the caller's problem (a 400), never a 500. */
function loadError(url: URL, error: unknown, timeoutMs: number): AgError {
  if (isTimeout(error)) {
    return new AgError("VALIDATION_ERROR", `${url.href} did not load within ${seconds(timeoutMs)}`);
  }
  const message = describeError(error);
  const net = message.match(/net::ERR_[A-Z_]+/)?.[0];
  if (net === "net::ERR_PROXY_CONNECTION_FAILED") {
    return new AgError(
      "SCREENSHOT_TARGET_DENIED",
      `${url.href} led to a URL that is neither a server of the session nor in SVC_SCREENSHOT_ALLOW_HOSTS (a redirect or navigation): not rendered`,
    );
  }
  const why = net ?? firstLine(error).replace(/^(page\.)?goto: /, "");
  return new AgError("VALIDATION_ERROR", `cannot load ${url.href}: ${why}`);
}

function isTimeout(error: unknown): boolean {
  return error instanceof Error && error.name === "TimeoutError";
}

function firstLine(error: unknown): string {
  return describeError(error).split("\n")[0]!.trim();
}

function seconds(ms: number): string {
  return `${Math.round(ms / 100) / 10} s`;
}

/** At most `limit` holders at once; the rest wait in order. */
function createGate(limit: number): { enter(): Promise<void>; leave(): void } {
  let free = limit;
  const waiting: Array<() => void> = [];
  return {
    async enter() {
      if (free > 0) {
        free--;
        return;
      }
      await new Promise<void>((resolve) => waiting.push(resolve));
    },
    leave() {
      const next = waiting.shift();
      if (next) next();
      else free++;
    },
  };
}
