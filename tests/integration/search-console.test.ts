import { afterAll, beforeAll, expect, test } from "bun:test";
import { join } from "node:path";
import type { Browser } from "playwright-core";
import { buildDashboard } from "../../scripts/dashboard.ts";
import { launchChromium } from "../helpers/browser.ts";
import { callApi, startTestRuntime, type TestRuntime } from "../helpers/runtime.ts";
import { tempDir } from "../helpers/temp.ts";
import { until } from "../helpers/until.ts";

// biome-ignore lint/suspicious/noExplicitAny: response bodies are inspected field by field
type Json = Record<string, any>;

/**
 * The console opens a search hit at its message (docs/search.md, "Picking up from a hit"): real
 * Chromium on the built dashboard of ag's real runtime, a headless session (the fake ACP agent)
 * whose hit lies further back than the transcript's first page, so the page reads older pages
 * until it is there, scrolls to it and highlights it.
 */
const FAKE = join(import.meta.dir, "..", "fakes", "acp-agent.ts");
/** More turns than the transcript view's first page (50 messages) holds. */
const LATER_TURNS = 30;

let ag: TestRuntime;
let browser: Browser;
let sessionId = "";

/** Runs `send` and resolves at the session's next `session.idle` (the turn's end), within 15 s. */
async function idleAfter(send: () => Promise<unknown>): Promise<void> {
  let unsubscribe = () => {};
  let timer: ReturnType<typeof setTimeout> | undefined;
  const idle = new Promise<void>((resolve, reject) => {
    timer = setTimeout(() => reject(new Error("the turn did not end within 15 s")), 15_000);
    unsubscribe = ag.bus.subscribe((event) => {
      if (event.event === "session.idle" && event.session?.id === sessionId) resolve();
    });
  });
  try {
    await send();
    await idle;
  } finally {
    clearTimeout(timer);
    unsubscribe();
  }
}

beforeAll(async () => {
  const dashboardRoot = await buildDashboard(tempDir("ag-search-console-dash-"));
  [ag, browser] = await Promise.all([startTestRuntime({}, { dashboardRoot }), launchChromium()]);
  const created = await callApi<Json>(ag, "POST", "/v1/sessions", {
    workDir: tempDir("ag-search-console-work-"),
    agent: "gemini",
    driver: "acp",
    agentCommand: [process.execPath, FAKE, "--state", tempDir("ag-search-console-fake-")].join(" "),
  });
  expect(created.status).toBe(201);
  sessionId = created.body.id;
  await idleAfter(() =>
    callApi(ag, "POST", `/v1/sessions/${sessionId}/send`, { text: "the capybaraloom is early" }),
  );
  for (let turn = 1; turn <= LATER_TURNS; turn++)
    await idleAfter(() =>
      callApi(ag, "POST", `/v1/sessions/${sessionId}/send`, { text: `later turn ${turn}` }),
    );
}, 120_000);

afterAll(async () => {
  await browser?.close();
  if (ag && sessionId) await callApi(ag, "DELETE", `/v1/sessions/${sessionId}`);
  await ag?.drain(100);
  ag?.close();
});

test("a search hit opens the session at its message: read back to it, scrolled to, highlighted", async () => {
  let hit: Json | undefined;
  await until(async () => {
    const found = await callApi<Json>(ag, "GET", "/v1/search?q=capybaraloom&role=prompt");
    hit = found.body.hits?.[0];
    return hit !== undefined;
  }, 10_000);
  const newest = await callApi<Json>(ag, "GET", `/v1/sessions/${sessionId}/transcript/cursor?limit=50`);
  // The hit is older than the first page the session's view reads.
  expect(hit!.messageId).toBeLessThan(newest.body.oldest_id);

  const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  const problems: string[] = [];
  page.on("pageerror", (e) => problems.push(e.message));
  page.on("console", (m) => m.type() === "error" && problems.push(m.text()));
  // ag on loopback with its own token: the page is served to this machine's browser as it is.
  await page.goto(`${ag.url}/dashboard/#/search/capybaraloom`);
  await page.waitForFunction(() => document.querySelectorAll("#search-hits li").length > 0);
  const link = await page.getAttribute("#hit-0 .hit-head a", "href");
  expect(link).toBe(`#/sessions/${sessionId}?at=${hit!.messageId}`);
  await page.focus("#search-box");
  await page.keyboard.press("Enter");
  await page.waitForFunction((href) => location.hash === href, link);

  const target = `#message-${hit!.messageId}`;
  await page.waitForSelector(`${target}[aria-current="true"]`, { timeout: 15_000 });
  expect(await page.getAttribute(target, "class")).toContain("at");
  expect(await page.textContent(`${target} .text`)).toBe("the capybaraloom is early");
  // Only that message is marked, and it is where the reader looks: inside the transcript's view.
  expect(await page.locator('.messages [aria-current="true"]').count()).toBe(1);
  await page.waitForFunction((selector) => {
    const entry = document.querySelector(selector)!.getBoundingClientRect();
    const list = document.querySelector(".messages")!.getBoundingClientRect();
    return entry.top >= list.top && entry.bottom <= list.bottom;
  }, target);
  expect(problems).toEqual([]);
  await page.close();
}, 60_000);
