import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import type { MockRule } from "../fakes/mock-model.ts";
import { type AgentWorld, sessionThatWroteHello, startAgentWorld } from "../helpers/agent-world.ts";
import { launchChromium, openDashboard } from "../helpers/browser.ts";
import { gitRepository } from "../helpers/git.ts";
import { tempDir } from "../helpers/temp.ts";

// biome-ignore lint/suspicious/noExplicitAny: response bodies are inspected field by field
type Json = Record<string, any>;

/**
 * A consensus review from the dashboard, as a person asks for one: in Chromium, against the
 * compiled binary driving the REAL agent CLI through the test mock, with auth on. The session's
 * page starts a review of two reviewers; the review's page shows it running, then — without a
 * reload, following the event stream — the verdict, each criterion's verdict and each reviewer's
 * notes. At a desk the reviewers disagree (split); on a phone they agree. Three agents at most at
 * once: the reviewed session and two reviewers. No console error and no CSP violation.
 */
const TOKEN = "review-t0ken";
const DESK = { name: "desk", width: 1440, height: 900 } as const;
const PHONE = { name: "phone", width: 390, height: 844 } as const;
type Viewport = typeof DESK | typeof PHONE;
const shots = process.env.AG_SCREENSHOT_DIR ?? tempDir("ag-shots-");
mkdirSync(shots, { recursive: true });

const BRIEF = "independent reviewers";
const CRITERIA = ["hello.txt greets the reader", "nothing else changed"];
/** The model's answers take this long: the page shows the review running first. */
const THINK_S = 3;

const answer = (c1: string, c2: string, verdict: string, who: string) =>
  `CRITERION 1: ${c1} — ${who} read hello.txt\nCRITERION 2: ${c2} — ${who} looked at the diff\nVERDICT: ${verdict}`;
const reviewerSays = (name: string, text: string): MockRule => ({
  name,
  match: BRIEF,
  times: 1,
  reply: { text, delay_s: THINK_S },
});

let world: AgentWorld;
let browser: Browser;
let target: string;

beforeAll(async () => {
  [world, browser] = await Promise.all([startAgentWorld({ SVC_AUTH_TOKEN: TOKEN }), launchChromium()]);
  gitRepository(world.workDir);
  // The reviewed session's work: the agent writes hello.txt.
  target = (await sessionThatWroteHello(world, { name: "greeter" })).id;
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await world?.stop();
});

/** A page at `path` of the dashboard (tests/helpers/browser.ts). */
function open(viewport: Viewport, path: string, colorScheme: "light" | "dark" = "light") {
  return openDashboard(browser, { url: world.ag.url, token: TOKEN, viewport, path, colorScheme });
}

/** What the test keeps in the page: a mark a reload would lose, and what the review's page showed. */
interface Shown {
  stayed: boolean;
  shown: string[];
}

/**
 * Starts a review from the session page's form and lands on the review's page while it runs.
 * The page is marked: the mark is gone if anything reloads it from here on.
 */
async function startFromForm(page: Page, criteria: string[], reviewers: number): Promise<string> {
  await page.waitForSelector(".session-view .reviews");
  await page.click(".review-toggle");
  await page.fill('#new-review textarea[name="criteria"]', criteria.join("\n"));
  await page.fill('#new-review input[name="reviewers"]', String(reviewers));
  // What the review's page shows, each time it changes: its reviewers' states and the verdict line.
  await page.evaluate(() => {
    const w = window as unknown as Shown;
    w.stayed = true;
    w.shown = [];
    new MutationObserver(() => {
      const view = document.querySelector(".consensus-view");
      if (!view) return;
      const reviewers = [...view.querySelectorAll(".reviewer")].map((r) => r.getAttribute("data-status"));
      const now = `${view.getAttribute("data-status")} ${reviewers.join(",")}`;
      if (w.shown.at(-1) !== now) w.shown.push(now);
    }).observe(document.body, { subtree: true, childList: true, attributes: true, characterData: true });
  });
  await page.click('#new-review button[type="submit"]');
  await page.waitForSelector('.consensus-view[data-status="running"]');
  const id = (await page.getAttribute(".consensus-view", "data-id"))!;
  expect(page.url()).toEndWith(`#/consensus/${id}`);
  expect(await page.textContent("#verdict")).toStartWith("RUNNING — ");
  return id;
}

/**
 * Waits for the review's end on the page itself: the event stream, never a reload, brings it.
 * On the way the reviewers' progress showed (their sessions' events read the record again):
 * the page showed the review running in more than one state.
 */
async function waitForEnd(page: Page): Promise<void> {
  await page.waitForSelector('.consensus-view[data-status="completed"]', { timeout: 120_000 });
  const { stayed, shown } = await page.evaluate(() => {
    const w = window as unknown as Shown;
    return { stayed: w.stayed, shown: w.shown };
  });
  expect(stayed).toBe(true);
  const running = shown.filter((s) => s.startsWith("running "));
  expect({ running: running.length > 1, shown }).toMatchObject({ running: true });
  expect(shown.at(-1)).toBe("completed done,done");
}

const rowsOf = (page: Page, selector: string) =>
  page.$$eval(selector, (rows) => rows.map((r) => (r as HTMLElement).innerText.replace(/\s+/g, " ").trim()));

/** Nothing wider than the screen. */
async function expectNoSidewaysScroll(page: Page, viewport: Viewport) {
  expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(viewport.width);
}

describe("a consensus review from the dashboard", () => {
  let splitId = "";

  test("at a desk: refused criteria show the API's words; two reviewers who disagree end split, live", async () => {
    world.mock.addRules(
      [
        reviewerSays("approve", answer("PASS", "PASS", "APPROVE", "the first")),
        reviewerSays("reject", answer("FAIL", "PASS", "REJECT", "the second")),
      ],
      { replace: true },
    );
    const { page, problems, close } = await open(DESK, `#/sessions/${target}`);
    try {
      await page.waitForSelector(".reviews p.muted:text('No consensus review')");
      // More criteria than the API takes: its own message and code, and nothing started.
      await page.click(".review-toggle");
      const many = Array.from({ length: 21 }, (_, i) => `criterion ${i + 1}`);
      await page.fill('#new-review textarea[name="criteria"]', many.join("\n"));
      await page.click('#new-review button[type="submit"]');
      await page.waitForSelector("#review-error");
      expect(await page.textContent("#review-error")).toMatch(
        /^invalid body\.criteria: .+ \(VALIDATION_ERROR\)$/,
      );
      expect((await world.api<Json[]>("GET", `/v1/consensus?sessionId=${target}`)).body).toEqual([]);
      await page.click(".review-toggle"); // closed again; startFromForm opens it

      const id = await startFromForm(page, CRITERIA, 2);
      splitId = id;
      // While it runs the criteria are listed, waiting; both reviewers are there.
      expect(await rowsOf(page, "#criteria tbody tr")).toEqual(CRITERIA.map((c) => `${c} – – waiting`));
      expect(await page.locator(".reviewer").count()).toBe(2);
      await page.screenshot({ path: join(shots, "consensus-desk-running.png"), fullPage: true });

      await waitForEnd(page);
      expect(await page.textContent("#verdict")).toBe("SPLIT — 1 approve, 1 reject");
      expect(await page.getAttribute("#verdict", "data-verdict")).toBe("split");
      expect(await rowsOf(page, "#criteria tbody tr")).toEqual([
        `${CRITERIA[0]} 1 1 SPLIT 50%`,
        `${CRITERIA[1]} 2 0 PASS 100%`,
      ]);
      // Each reviewer: its verdict, PASS/FAIL per criterion with its note, a link to its session.
      const reviewers = await rowsOf(page, ".reviewer .assessments");
      expect(reviewers.sort()).toEqual([
        `FAIL ${CRITERIA[0]} the second read hello.txt PASS ${CRITERIA[1]} the second looked at the diff`,
        `PASS ${CRITERIA[0]} the first read hello.txt PASS ${CRITERIA[1]} the first looked at the diff`,
      ]);
      expect((await rowsOf(page, ".reviewer .reviewer-head .mark")).sort()).toEqual(["APPROVE", "REJECT"]);
      expect(await page.locator('.reviewer[data-status="done"] a.reviewer-session').count()).toBe(2);
      // The change, the costs, who asked.
      expect(await page.textContent(".change")).toContain("hello.txt");
      expect(await page.textContent('.change [data-kind="git"]')).toContain("git diff");
      const record = (await world.api<Json>("GET", `/v1/consensus/${id}`)).body;
      expect(record).toMatchObject({ status: "completed", verdict: "split", counted: 2 });
      expect(await page.textContent(".review-facts")).toContain(record.requestedBy);
      await page.screenshot({ path: join(shots, "consensus-desk-split.png"), fullPage: true });

      // A reviewer's session links back to its review, and offers no review of its own.
      await page.click(".reviewer a.reviewer-session");
      await page.waitForSelector(`.session-view a[href="#/consensus/${id}"]`);
      expect(await page.$(".session-view .reviews")).toBeNull();
      await page.click(`.session-view a[href="#/consensus/${id}"]`);
      await page.waitForSelector('.consensus-view[data-status="completed"]');

      // Back to the reviewed session: its reviews list this one.
      await page.click(`.consensus-view h2 a`);
      await page.waitForSelector(`#reviews li[data-id="${id}"]`);
      expect(await page.textContent(`#reviews li[data-id="${id}"] a`)).toBe("SPLIT — 1 approve, 1 reject");
      await page.locator(".reviews").scrollIntoViewIfNeeded();
      await page.screenshot({ path: join(shots, "consensus-desk-session.png") });
      // Chromium logs the refused request itself (the 400 asked for above); nothing else.
      expect(problems.filter((p) => !p.includes("status of 400 (Bad Request)"))).toEqual([]);
      expect(problems.length).toBeLessThanOrEqual(1);
    } finally {
      await close();
    }
  }, 240_000);

  test("on a phone: a notification's link opens the review; two reviewers who agree approve, live", async () => {
    expect(splitId).not.toBe("");
    // The link a notification carries lands on the finished review (in the dark, this once).
    {
      const { page, problems, close } = await open(PHONE, `#/consensus/${splitId}`, "dark");
      try {
        await page.waitForSelector('.consensus-view[data-status="completed"]');
        expect(await page.textContent("#verdict")).toBe("SPLIT — 1 approve, 1 reject");
        const verdict = await page.locator("#verdict").boundingBox();
        expect(verdict!.y + verdict!.height).toBeLessThanOrEqual(PHONE.height);
        await expectNoSidewaysScroll(page, PHONE);
        await page.screenshot({ path: join(shots, "consensus-phone-split-dark.png"), fullPage: true });
        expect(problems).toEqual([]);
      } finally {
        await close();
      }
    }
    world.mock.addRules(
      [
        reviewerSays("first", answer("PASS", "PASS", "APPROVE", "one")),
        reviewerSays("second", answer("PASS", "PASS", "APPROVE", "two")),
      ],
      { replace: true },
    );
    const { page, problems, close } = await open(PHONE, `#/sessions/${target}`);
    try {
      await page.waitForSelector(`#reviews li[data-id="${splitId}"]`);
      await page.click(".review-toggle");
      await expectNoSidewaysScroll(page, PHONE);
      await page.locator("#new-review").scrollIntoViewIfNeeded();
      await page.screenshot({ path: join(shots, "consensus-phone-form.png") });
      await page.click(".review-toggle"); // closed again; startFromForm opens it
      const id = await startFromForm(page, CRITERIA, 2);
      await waitForEnd(page);
      expect(await page.textContent("#verdict")).toBe("APPROVE — 2 of 2 agree (100%)");
      expect(await rowsOf(page, "#criteria tbody tr")).toEqual([
        `${CRITERIA[0]} 2 0 PASS 100%`,
        `${CRITERIA[1]} 2 0 PASS 100%`,
      ]);
      expect(await page.locator('.reviewer .assessments li[data-pass="true"]').count()).toBe(4);
      await expectNoSidewaysScroll(page, PHONE);
      await page.screenshot({ path: join(shots, "consensus-phone-approve.png"), fullPage: true });
      // Newest first in the session's list.
      await page.click(".consensus-view h2 a");
      await page.waitForSelector(`#reviews li[data-id="${id}"]`);
      expect(
        await page.$$eval("#reviews li", (items) => items.map((li) => li.getAttribute("data-id"))),
      ).toEqual([id, splitId]);
      expect(problems).toEqual([]);
    } finally {
      await close();
    }
  }, 240_000);
});
