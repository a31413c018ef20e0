import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { createSessionRepo } from "../../src/sessions/index.ts";
import { openDatabase } from "../../src/store/db.ts";
import { sampleSession } from "../helpers/app.ts";
import { agEnv, compiledBinary, startAg } from "../helpers/binary.ts";
import { launchChromium } from "../helpers/browser.ts";
import { tempDir } from "../helpers/temp.ts";

let ag: string;
let browser: Browser;
beforeAll(async () => {
  [ag, browser] = await Promise.all([compiledBinary(), launchChromium()]);
}, 60_000);
afterAll(async () => {
  await browser?.close();
});

/** Opens a page and records every console error and failed request (a CSP violation is both). */
async function open(url: string): Promise<{ page: Page; problems: string[] }> {
  const page = await browser.newPage();
  const problems: string[] = [];
  page.on("console", (m) => {
    if (m.type() === "error" && !m.text().includes("401")) problems.push(m.text());
  });
  page.on("pageerror", (e) => problems.push(e.message));
  await page.goto(url);
  return { page, problems };
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
      const { page, problems } = await open(`${server.url}/dashboard/`);
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
      await page.screenshot({ path: join(process.env.AG_SCREENSHOT_DIR ?? tempDir(), "dashboard.png") });
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
});
