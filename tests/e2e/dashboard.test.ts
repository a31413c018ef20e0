import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { createSessionRepo } from "../../src/sessions/index.ts";
import { openDatabase } from "../../src/store/db.ts";
import { sampleSession } from "../helpers/app.ts";
import { type AgProcess, agEnv, compiledBinary, startAg } from "../helpers/binary.ts";
import { launchChromium, transferred } from "../helpers/browser.ts";
import { tempDir } from "../helpers/temp.ts";

let ag: string;
let browser: Browser;
beforeAll(async () => {
  [ag, browser] = await Promise.all([compiledBinary(), launchChromium()]);
}, 60_000);
afterAll(async () => {
  await browser?.close();
});

interface Seen {
  method: string;
  url: URL;
}

/**
 * Opens a page and records every console error and failed request (a CSP violation is both),
 * and every request the page makes.
 */
async function open(url: string): Promise<{ page: Page; problems: string[]; requests: Seen[] }> {
  const page = await browser.newPage();
  const problems: string[] = [];
  const requests: Seen[] = [];
  page.on("console", (m) => {
    if (m.type() === "error" && !m.text().includes("401")) problems.push(m.text());
  });
  page.on("pageerror", (e) => problems.push(e.message));
  page.on("request", (r) => requests.push({ method: r.method(), url: new URL(r.url()) }));
  await page.goto(url);
  return { page, problems, requests };
}

const isStream = (r: Seen) => r.method === "GET" && r.url.pathname === "/v1/events";
const isTokenMint = (r: Seen) => r.method === "POST" && r.url.pathname === "/v1/auth/sse-token";
const isListLoad = (r: Seen) => r.method === "GET" && r.url.pathname === "/v1/sessions";
/** A request as a failed assertion shows it. */
const show = (r: Seen) => `${r.method} ${r.url.pathname}${r.url.search}`;

/** Gives the token to the page's form, as a user does. */
async function enterToken(page: Page, value: string) {
  await page.waitForSelector("#token-form:not([hidden])");
  await page.fill("#token", value);
  await page.click('#token-form button[type="submit"]');
}

/**
 * Starts a session through the API, as any client does (so the server publishes its events). Its
 * agent is a harmless shell that only waits: the row is what matters, not the agent.
 */
async function createSession(server: AgProcess, name: string, bearer = server.token()) {
  const response = await fetch(`${server.url}/v1/sessions`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${bearer}` },
    body: JSON.stringify({ name, workDir: tempDir(), agentCommand: "sh -c 'sleep 600'" }),
  });
  expect(response.status).toBe(201);
}

/** Waits for the row of a session; the guard is generous (a hang guard, not a measurement). */
async function waitForRow(page: Page, name: string) {
  await page.waitForFunction(
    (wanted) => [...document.querySelectorAll("#sessions td.name")].some((td) => td.textContent === wanted),
    name,
    { timeout: 10_000 },
  );
}

/** Adds a session the way the server stores one: a row in its state database. */
function addSession(stateDir: string, name: string, status: "idle" | "working") {
  const db = openDatabase(join(stateDir, "state.db"));
  createSessionRepo(db).insert(sampleSession({ name, status, workDir: "/repos/demo" }));
  db.close();
}

describe("the dashboard in Chromium, served by the compiled binary", () => {
  test("shows health and the session list, with no CSP violation", async () => {
    const server = await startAg(ag);
    try {
      addSession(server.stateDir, "fix-the-tests", "working");
      addSession(server.stateDir, "<img src=x onerror=alert(1)>", "idle");
      const { page, problems, requests } = await open(`${server.url}/dashboard/`);
      await page.waitForSelector('#server-status[data-state="ok"]');
      await page.waitForSelector("#sessions tbody tr");
      expect(await page.textContent('[data-field="tmux"]')).toBe("healthy");
      expect(await page.textContent('[data-field="sessions"]')).toBe("2 active / 2 total");
      const rows = await page.$$eval("#sessions tbody tr", (trs) =>
        trs.map((tr) => [...tr.querySelectorAll("td")].slice(0, 3).map((td) => td.textContent)),
      );
      expect(rows).toContainEqual(["fix-the-tests", "working", "/repos/demo"]);
      // A name is text, never markup.
      expect(rows).toContainEqual(["<img src=x onerror=alert(1)>", "idle", "/repos/demo"]);
      expect(await page.$("#sessions img")).toBeNull();
      await page.waitForSelector('#live[data-state="live"]');
      await page.screenshot({ path: join(process.env.AG_SCREENSHOT_DIR ?? tempDir(), "dashboard.png") });

      // Without SVC_AUTH_TOKEN the stream needs no token: none is minted, none is sent.
      expect(requests.filter(isStream).map((r) => r.url.search)).toEqual([""]);
      expect(requests.filter(isTokenMint).map(show)).toEqual([]);
      await createSession(server, "no-token-needed");
      await waitForRow(page, "no-token-needed");
      expect(problems).toEqual([]);
    } finally {
      await server.stop();
    }
  }, 30_000);

  test("asks for the token when auth is on, and keeps it in memory only", async () => {
    const env = agEnv({ SVC_AUTH_TOKEN: "dash-t0ken", SVC_PORT: "0", SVC_HOST: "127.0.0.1" });
    const server = await startAg(ag, [], { env });
    try {
      addSession(server.stateDir, "secured", "idle");
      const { page, problems } = await open(`${server.url}/dashboard/`);
      await page.waitForSelector("#token-form:not([hidden])");

      await page.fill("#token", "wrong");
      await page.click('#token-form button[type="submit"]');
      await page.waitForFunction(
        () => document.querySelector("#token-error")?.textContent === "That token was refused.",
      );

      await page.fill("#token", "dash-t0ken");
      await page.click('#token-form button[type="submit"]');
      await page.waitForSelector("#sessions tbody tr");
      expect(await page.textContent("#sessions tbody td.name")).toBe("secured");
      expect(await page.isHidden("#token-form")).toBe(true);

      const stored = await page.evaluate(() => ({
        local: localStorage.length,
        session: sessionStorage.length,
        cookie: document.cookie,
        url: location.href,
        field: (document.querySelector("#token") as HTMLInputElement).value,
      }));
      expect(stored).toEqual({
        local: 0,
        session: 0,
        cookie: "",
        url: `${server.url}/dashboard/`,
        field: "",
      });
      expect(problems).toEqual([]);
    } finally {
      await server.stop();
    }
  }, 30_000);

  test("the token form appears while another client on the same address floods wrong tokens", async () => {
    const env = agEnv({ SVC_AUTH_TOKEN: "dash-t0ken", SVC_PORT: "0", SVC_HOST: "127.0.0.1" });
    const server = await startAg(ag, [], { env });
    try {
      // Past the address's budget (20 a minute) its wrong guesses are slowed 429s.
      const guesses = await Promise.all(
        Array.from({ length: 25 }, (_, i) =>
          fetch(`${server.url}/v1/sessions`, { headers: { authorization: `Bearer guess-${i}` } }).then(
            (r) => r.status,
          ),
        ),
      );
      expect(guesses.filter((s) => s === 429).length).toBeGreaterThan(0);
      // The page, from the same address, has no token yet: it is told to ask for one, not held off.
      const { page, problems } = await open(`${server.url}/dashboard/`);
      await page.waitForSelector("#token-form:not([hidden])");
      await enterToken(page, "dash-t0ken");
      await page.waitForSelector('#live[data-state="live"]');
      expect(problems).toEqual([]);
    } finally {
      await server.stop();
    }
  }, 30_000);

  test("with auth on, follows the event stream: a new session shows up with no polling", async () => {
    const env = agEnv({ SVC_AUTH_TOKEN: "dash-t0ken", SVC_PORT: "0", SVC_HOST: "127.0.0.1" });
    const server = await startAg(ag, [], { env });
    try {
      const { page, problems, requests } = await open(`${server.url}/dashboard/`);
      // Health answers slowly, as on a busy machine: the list read after the stream opens comes
      // after it, and "live" must wait for that read (it once showed before it was even sent).
      await page.route("**/v1/health", async (route) => {
        await Bun.sleep(500);
        await route.continue();
      });
      await enterToken(page, "dash-t0ken");
      // "live" is shown once the stream is open and the list read after it has answered.
      await page.waitForSelector('#live[data-state="live"]');
      // Polling every 5 s would load the list in any 6 s; a page following the stream does not
      // load it while nothing happens.
      const quietFrom = requests.length;
      await Bun.sleep(6_000);
      expect(requests.slice(quietFrom).filter(isListLoad).map(show)).toEqual([]);

      await createSession(server, "appears-live", "dash-t0ken");
      await waitForRow(page, "appears-live");
      expect(requests.filter(isTokenMint)).toHaveLength(1);
      const streams = requests.filter(isStream);
      expect(streams).toHaveLength(1);
      expect(streams[0]!.url.searchParams.get("token")).toMatch(/^ags_/);
      // The bearer token itself never goes into a URL.
      expect(requests.some((r) => r.url.href.includes("dash-t0ken"))).toBe(false);
      expect(problems).toEqual([]);
    } finally {
      await server.stop();
    }
  }, 30_000);

  test("reconnects by itself with a new single-use token and the last event id", async () => {
    // The server closes a stream that carried no event for 1.5 s, as it does after 5 min when
    // nothing happens: the page must come back on its own.
    const env = agEnv({
      SVC_AUTH_TOKEN: "dash-t0ken",
      SVC_SSE_CLIENT_TIMEOUT_MS: "1500",
      SVC_PORT: "0",
      SVC_HOST: "127.0.0.1",
    });
    const server = await startAg(ag, [], { env });
    try {
      const { page, problems, requests } = await open(`${server.url}/dashboard/`);
      await enterToken(page, "dash-t0ken");
      await page.waitForSelector('#live[data-state="live"]');
      await createSession(server, "before-the-drop", "dash-t0ken");
      await waitForRow(page, "before-the-drop");
      await page.waitForRequest(
        (r) => r.url().includes("/v1/events?") && new URL(r.url()).searchParams.has("lastEventId"),
        { timeout: 15_000 },
      );
      await createSession(server, "after-the-drop", "dash-t0ken");
      await waitForRow(page, "after-the-drop");

      const streams = requests.filter(isStream);
      expect(streams.length).toBeGreaterThan(1);
      const tokens = streams.map((r) => r.url.searchParams.get("token"));
      for (const token of tokens) expect(token).toMatch(/^ags_/);
      expect(new Set(tokens).size).toBe(tokens.length); // each connection its own token
      expect(requests.filter(isTokenMint)).toHaveLength(streams.length);
      const resumedAt = streams.map((r) => r.url.searchParams.get("lastEventId")).filter((id) => id !== null);
      for (const id of resumedAt) expect(id).toMatch(/^\d+$/);
      expect(problems).toEqual([]);
    } finally {
      await server.stop();
    }
  }, 45_000);

  test("the list shows what each running session's agent takes: Mem and CPU, on a desk and on a phone", async () => {
    const server = await startAg(ag);
    try {
      await createSession(server, "measured");
      addSession(server.stateDir, "not-running-here", "idle"); // no pane: nothing to measure
      for (const viewport of [
        { width: 1440, height: 900 },
        { width: 390, height: 844 },
      ]) {
        const context = await browser.newContext({ viewport, isMobile: viewport.width < 700 });
        const page = await context.newPage();
        const problems: string[] = [];
        page.on("pageerror", (e) => problems.push(e.message));
        page.on("console", (m) => m.type() === "error" && problems.push(m.text()));
        await page.goto(`${server.url}/dashboard/`);
        await waitForRow(page, "measured");
        // The figures come with GET /v1/metrics, loaded after the list.
        await page.waitForFunction(() => {
          const row = [...document.querySelectorAll("#sessions tbody tr")].find(
            (tr) => tr.querySelector("td.name")?.textContent === "measured",
          );
          return /^\d+(\.\d)? (MB|GB)$/.test(row?.querySelector("td.mem")?.textContent ?? "");
        });
        const cells = await page.$$eval("#sessions tbody tr", (trs) =>
          trs.map((tr) => {
            const cell = (name: string) => tr.querySelector(`td.${name}`) as HTMLElement;
            return {
              name: cell("name").textContent,
              mem: cell("mem").textContent,
              cpu: cell("cpu").textContent,
              title: cell("mem").title,
              shown: cell("mem").offsetWidth > 0 && cell("cpu").offsetWidth > 0,
            };
          }),
        );
        expect(cells.find((c) => c.name === "measured")).toEqual({
          name: "measured",
          mem: expect.stringMatching(/^\d+(\.\d)? (MB|GB)$/),
          cpu: expect.stringMatching(/^\d+(\.\d)?%$/),
          title: expect.stringMatching(/^\d+ process(es)?, pid \d+$/),
          shown: true,
        });
        expect(cells.find((c) => c.name === "not-running-here")).toMatchObject({ mem: "–", cpu: "–" });
        if (viewport.width < 700) {
          // A card on a phone: labelled figures, nothing wider than the screen.
          const label = await page.$eval(
            "#sessions td.mem",
            (td) => getComputedStyle(td, "::before").content,
          );
          expect(label).toBe('"mem "');
          expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
        } else {
          const heads = await page.$$eval("#sessions thead th", (ths) => ths.map((th) => th.textContent));
          expect(heads).toEqual([
            "Name",
            "Status",
            "Work dir",
            "Agent · mode",
            "Tokens",
            "Cost",
            "Mem",
            "CPU",
            "Age",
          ]);
        }
        await page.screenshot({
          path: join(process.env.AG_SCREENSHOT_DIR ?? tempDir(), `dashboard-agents-${viewport.width}.png`),
        });
        expect(problems).toEqual([]);
        await context.close();
      }
    } finally {
      await server.stop();
    }
  }, 60_000);

  test("a headless (ACP) session's page: its transcript, no terminal, no keys or fork; on a desk and on a phone", async () => {
    const server = await startAg(ag);
    try {
      // The fake ACP agent as the program of Gemini CLI's ACP entry: no real agent needed here.
      const fake = join(import.meta.dir, "..", "fakes", "acp-agent.ts");
      const created = await fetch(`${server.url}/v1/sessions`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${server.token()}` },
        body: JSON.stringify({
          name: "headless",
          agent: "gemini",
          driver: "acp",
          workDir: tempDir(),
          agentCommand: [process.execPath, fake, "--state", tempDir()].join(" "),
          prompt: "say hello",
        }),
      });
      expect(created.status).toBe(201);
      const { id } = (await created.json()) as { id: string };
      for (const viewport of [
        { width: 1440, height: 900 },
        { width: 390, height: 844 },
      ]) {
        const context = await browser.newContext({ viewport, isMobile: viewport.width < 700 });
        const page = await context.newPage();
        const problems: string[] = [];
        const sockets: string[] = [];
        page.on("pageerror", (e) => problems.push(e.message));
        page.on("console", (m) => m.type() === "error" && problems.push(m.text()));
        page.on("websocket", (ws) => sockets.push(ws.url()));
        await page.goto(`${server.url}/dashboard/#/sessions/${id}`);
        await page.waitForFunction(() =>
          document.querySelector("section.transcript")?.textContent?.includes("Hello from the fake agent!"),
        );
        expect(await page.$("section.terminal")).toBeNull();
        const buttons = await page.$$eval('[aria-label="Session actions"] button', (bs) =>
          bs.map((b) => b.textContent),
        );
        expect(buttons).toEqual(["Interrupt", "Verify", "Hand off", "Kill"]);
        const facts = await page.$eval(".session-facts", (el) => el.textContent ?? "");
        expect(facts).toContain("gemini · default · headless (ACP)");
        expect(sockets.filter((url) => url.includes("/terminal"))).toEqual([]);
        if (viewport.width < 700)
          expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
        await page.screenshot({
          path: join(process.env.AG_SCREENSHOT_DIR ?? tempDir(), `dashboard-acp-${viewport.width}.png`),
        });
        expect(problems).toEqual([]);
        await context.close();
      }
    } finally {
      await server.stop();
    }
  }, 60_000);
  test("the console's files arrive compressed and are kept: a first visit ≤ 60 KB, a warm reload ≤ 2 KB; on a desk and on a phone", async () => {
    const server = await startAg(ag);
    try {
      for (const viewport of [
        { width: 1440, height: 900 },
        { width: 390, height: 844 },
      ]) {
        const context = await browser.newContext({ viewport, isMobile: viewport.width < 700 });
        const page = await context.newPage();
        const problems: string[] = [];
        page.on("pageerror", (e) => problems.push(e.message));
        page.on("console", (m) => m.type() === "error" && problems.push(m.text()));
        const encodings: Record<string, string | null> = {};
        page.on("response", (r) => {
          const path = new URL(r.url()).pathname;
          if (path.startsWith("/dashboard/") && r.status() === 200)
            encodings[path] = r.headers()["content-encoding"] ?? null;
        });
        const cdp = await context.newCDPSession(page);
        await cdp.send("Network.enable");
        const live = () => page.waitForSelector('#live[data-state="live"]');
        const first = await transferred(cdp, async () => {
          await page.goto(`${server.url}/dashboard/`);
          await live();
        });
        // The page, its script and its two style sheets, each as brotli.
        expect(Object.keys(encodings)).toHaveLength(4);
        for (const encoding of Object.values(encodings)) expect(encoding).toBe("br");
        expect(first.console).toBeLessThanOrEqual(60 * 1024);
        const reload = await transferred(cdp, async () => {
          await page.reload();
          await live();
        });
        // Only the page is asked about again (a 304); the hashed files come from the cache.
        expect(
          Object.entries(reload.files).filter(([path, bytes]) => path.startsWith("/dashboard") && bytes > 0),
        ).toEqual([["/dashboard/", expect.any(Number)]]);
        expect(reload.console).toBeLessThanOrEqual(2 * 1024);
        expect(problems).toEqual([]);
        await context.close();
      }
    } finally {
      await server.stop();
    }
  }, 60_000);
});
