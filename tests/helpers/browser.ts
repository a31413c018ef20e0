import { readFileSync } from "node:fs";
import type { Browser, CDPSession, Page } from "playwright-core";
import { CHROMIUM_ARGS, findChromium, launchChromium as launch } from "../../src/screenshot/index.ts";

/** Debian's Chromium (CI installs it), found as ag finds it; SVC_CHROMIUM_PATH points elsewhere. */
export function chromiumPath(): string {
  const found = findChromium(process.env.SVC_CHROMIUM_PATH || null);
  if (found.path === null) {
    throw new Error(`Chromium is needed for the browser tests: apt-get install chromium (${found.reason})`);
  }
  return found.path;
}

/** The machine has no network but loopback: the flags keep Chromium from reaching for Google's hosts. */
export function launchChromium(): Promise<Browser> {
  return launch(chromiumPath(), CHROMIUM_ARGS);
}

export interface DashboardViewport {
  name: string;
  width: number;
  height: number;
}

/**
 * A page at `path` of the dashboard served at `url`, its token given as a person does (through
 * the token form); every console error (but the first load's refused 401), page error and CSP
 * violation is recorded in `problems`. `beforeToken` looks at the page before the token is given.
 */
export async function openDashboard(
  browser: Browser,
  options: {
    url: string;
    token: string;
    viewport: DashboardViewport;
    path: string;
    colorScheme?: "light" | "dark";
    beforeToken?: (page: Page) => Promise<void>;
  },
): Promise<{ page: Page; problems: string[]; close: () => Promise<void> }> {
  const { viewport } = options;
  const context = await browser.newContext({
    colorScheme: options.colorScheme ?? "light",
    viewport: { width: viewport.width, height: viewport.height },
    isMobile: viewport.name === "phone",
    hasTouch: viewport.name === "phone",
  });
  const page = await context.newPage();
  const problems: string[] = [];
  page.on("console", (m) => {
    // The first load before the token is given is refused by design.
    if (m.type() === "error" && !m.text().includes("401")) problems.push(m.text());
  });
  page.on("pageerror", (e) => problems.push(e.message));
  // A CSP violation is reported by the page itself too (Chromium also logs it as an error).
  await page.addInitScript(() =>
    document.addEventListener("securitypolicyviolation", (e) =>
      console.error(`CSP violation: ${e.violatedDirective} ${e.blockedURI}`),
    ),
  );
  await page.goto(`${options.url}/dashboard/${options.path}`);
  await page.waitForSelector("#token-form:not([hidden])");
  await options.beforeToken?.(page);
  await page.fill("#token", options.token);
  await page.click('#token-form button[type="submit"]');
  return { page, problems, close: () => context.close() };
}

/** What axe-core finds against WCAG 2 AA on the page as it is now: one line per failing element. */
export async function accessibilityViolations(
  page: Page,
  options: { rules?: string[] } = {},
): Promise<string[]> {
  // Evaluated over the DevTools protocol, which the page's CSP does not govern: no script tag.
  axeSource ??= readFileSync(require.resolve("axe-core/axe.min.js"), "utf8");
  await page.evaluate(axeSource);
  const violations = await page.evaluate(async (rules) => {
    // biome-ignore lint/suspicious/noExplicitAny: axe is the global the script just defined
    const axe = (globalThis as any).axe;
    const result = await axe.run(document, {
      runOnly: rules ? { type: "rule", values: rules } : { type: "tag", values: ["wcag2a", "wcag2aa"] },
      resultTypes: ["violations"],
    });
    return result.violations.flatMap(
      (v: { id: string; nodes: { target: string[]; failureSummary: string }[] }) =>
        v.nodes.map((n) => `${v.id} ${n.target.join(" ")}: ${n.failureSummary.replace(/\s+/g, " ")}`),
    );
  }, options.rules ?? null);
  return violations;
}
let axeSource: string | undefined;

export interface Transfer {
  console: number;
  api: number;
  /** Bytes per path: the console's files and the API's answers. */
  files: Record<string, number>;
}

/**
 * Counts what arrives over the network (`cdp` has Network enabled) while `action` runs, and until
 * every request it started has ended (the event stream, which never does, aside; bounded): cache
 * hits arrive with nothing.
 */
export async function transferred(cdp: CDPSession, action: () => Promise<void>): Promise<Transfer> {
  const urls = new Map<string, string>();
  const sizes = new Map<string, number>();
  const ended = new Set<string>();
  const onRequest = (e: { requestId: string; request: { url: string } }) =>
    urls.set(e.requestId, e.request.url);
  const onFinished = (e: { requestId: string; encodedDataLength: number }) => {
    sizes.set(e.requestId, e.encodedDataLength);
    ended.add(e.requestId);
  };
  const onFailed = (e: { requestId: string }) => ended.add(e.requestId);
  cdp.on("Network.requestWillBeSent", onRequest);
  cdp.on("Network.loadingFinished", onFinished);
  cdp.on("Network.loadingFailed", onFailed);
  await action();
  const open = () =>
    [...urls].filter(([id, url]) => !ended.has(id) && new URL(url).pathname !== "/v1/events").length;
  for (const deadline = Date.now() + 5_000; open() > 0 && Date.now() < deadline; ) await Bun.sleep(20);
  cdp.off("Network.requestWillBeSent", onRequest);
  cdp.off("Network.loadingFinished", onFinished);
  cdp.off("Network.loadingFailed", onFailed);
  const result: Transfer = { console: 0, api: 0, files: {} };
  for (const [id, bytes] of sizes) {
    const path = new URL(urls.get(id) ?? "http://x/").pathname;
    if (path.startsWith("/dashboard")) result.console += bytes;
    else result.api += bytes;
    result.files[path] = (result.files[path] ?? 0) + bytes;
  }
  return result;
}
