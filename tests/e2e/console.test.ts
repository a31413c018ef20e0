import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { type AgentWorld, startAgentWorld } from "../helpers/agent-world.ts";
import { freePort } from "../helpers/binary.ts";
import { launchChromium, openDashboard } from "../helpers/browser.ts";
import { tempDir } from "../helpers/temp.ts";
import { until } from "../helpers/until.ts";

// biome-ignore lint/suspicious/noExplicitAny: response bodies are inspected field by field
type Json = Record<string, any>;

/**
 * The console, as a person uses it: in Chromium, against the compiled binary driving the REAL
 * agent CLI through the test mock, with auth on (so every stream and terminal runs on single-use
 * tokens), on a desk-sized screen and on a phone. A notification's deep link opens the pending
 * card; Approve lets the agent write its file; an option button answers a question; the send box
 * delivers one message; the terminal shows the agent's screen; a dead letter is retried from the
 * server view. No console error and no CSP violation anywhere (each fails the test).
 */
const TOKEN = "console-t0ken";
const VIEWPORTS = [
  { name: "desk", width: 1440, height: 900 },
  { name: "phone", width: 390, height: 844 },
] as const;
const shots = process.env.AG_SCREENSHOT_DIR ?? tempDir("ag-shots-");
mkdirSync(shots, { recursive: true });

const receiverPort = freePort();
let receiverUp = false;
const received: Json[] = [];
const receiver = Bun.serve({
  port: receiverPort,
  hostname: "127.0.0.1",
  async fetch(request) {
    const body = await request.json();
    // Down: "come back at once", so the four attempts end in a dead letter within a second.
    if (!receiverUp) return new Response("busy", { status: 429, headers: { "retry-after": "0" } });
    received.push(body);
    return new Response("ok");
  },
});

let world: AgentWorld;
let browser: Browser;
beforeAll(async () => {
  [world, browser] = await Promise.all([
    startAgentWorld({
      SVC_AUTH_TOKEN: TOKEN,
      SVC_WEBHOOKS: JSON.stringify([
        { url: `http://127.0.0.1:${receiverPort}/hook`, events: ["session.created"] },
      ]),
    }),
    launchChromium(),
  ]);
}, 90_000);
afterAll(async () => {
  await browser?.close();
  await world?.stop();
  receiver.stop(true);
});

/** A page at `path` of the dashboard (tests/helpers/browser.ts); nothing of the sessions shows before the token. */
function open(viewport: (typeof VIEWPORTS)[number], path: string) {
  return openDashboard(browser, {
    url: world.ag.url,
    token: TOKEN,
    viewport,
    path,
    beforeToken: async (page) => {
      expect(await page.$("#pending, #sessions tbody tr, .session-view")).toBeNull();
    },
  });
}

async function createSession(prompt?: string): Promise<{ id: string; workDir: string }> {
  const workDir = tempDir("ag-console-work-");
  const created = await world.api<Json>("POST", "/v1/sessions", { workDir, ...(prompt ? { prompt } : {}) });
  expect(created.status).toBe(201);
  return { id: created.body.id, workDir };
}

const kill = (id: string) => world.api("DELETE", `/v1/sessions/${id}`);

/** The text xterm.js shows (its DOM renderer keeps one element per row). */
const terminalText = (page: Page) =>
  page.$$eval(".xterm-rows > div", (rows) => rows.map((r) => r.textContent ?? "").join("\n"));

/** On a phone the decision is in reach: on screen without scrolling, and no sideways scroll. */
async function expectInReach(page: Page, selector: string, viewport: (typeof VIEWPORTS)[number]) {
  const box = await page.locator(selector).first().boundingBox();
  expect(box).not.toBeNull();
  expect(box!.y + box!.height).toBeLessThanOrEqual(viewport.height);
  expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(viewport.width);
}

for (const viewport of VIEWPORTS) {
  describe(`the console at ${viewport.width}×${viewport.height}`, () => {
    test("a permission's deep link shows the file and its content; Approve lets the agent write it", async () => {
      const { id, workDir } = await createSession("edit file");
      await world.waitFor(id, "permission_prompt", 60_000);
      const { page, problems, close } = await open(viewport, `#/sessions/${id}`);
      try {
        const card = page.locator('#pending[data-kind="tool"]');
        await card.waitFor();
        await page.waitForSelector("#pending .diff .add");
        const text = await card.textContent();
        expect(text).toContain(`${workDir}/hello.txt`);
        expect(text).toContain("hello from the mock");
        if (viewport.name === "phone") await expectInReach(page, "#pending button.approve", viewport);
        await page.screenshot({ path: join(shots, `console-${viewport.name}-permission.png`) });

        await page.click("#pending button.approve");
        await world.waitFor(id, "idle", 30_000);
        expect(readFileSync(join(workDir, "hello.txt"), "utf8")).toBe("hello from the mock\n");
        await page.waitForSelector("#pending", { state: "detached" });
        expect(problems).toEqual([]);
      } finally {
        await close();
        await kill(id);
      }
    }, 120_000);

    test("a question's option button answers it", async () => {
      const { id } = await createSession("ask me");
      await world.waitFor(id, "asking", 60_000);
      const { page, problems, close } = await open(viewport, `#/sessions/${id}`);
      try {
        await page.waitForSelector('#pending[data-kind="question"] button.option');
        expect(await page.textContent("#pending")).toContain("Which color should the button be?");
        if (viewport.name === "phone") await expectInReach(page, "#pending button.option", viewport);
        await page.screenshot({ path: join(shots, `console-${viewport.name}-question.png`) });
        await page.locator("#pending button.option", { hasText: "Red" }).click();
        await world.waitFor(id, "idle", 30_000);
        // The agent got the answer: the tool's result names the option picked. The agent writes its
        // transcript on its own schedule, which on a busy machine can end after its turn did (the
        // cursor reads the file as it is; /read is what waits): bounded, a hang guard.
        const toolResults = async () => {
          const page1 = await world.api<Json>("GET", `/v1/sessions/${id}/transcript/cursor?limit=200`);
          return (page1.body.messages as Json[])
            .filter((m) => m.kind === "tool_result")
            .map((m) => m.text)
            .join("\n");
        };
        await until(async () => (await toolResults()) !== "", 15_000).catch(() => {});
        expect(await toolResults()).toContain("Red");
        expect(problems).toEqual([]);
      } finally {
        await close();
        await kill(id);
      }
    }, 120_000);

    test("the send box delivers one message; the terminal shows the agent's screen as it changes", async () => {
      const { id } = await createSession();
      await world.waitFor(id, "idle", 60_000);
      const { page, problems, close } = await open(viewport, `#/sessions/${id}`);
      try {
        // The terminal first paints the agent's current screen.
        await page.waitForSelector('.terminal-state[data-state="live"]');
        await page.waitForFunction(() =>
          document.querySelector(".xterm-rows")?.textContent?.includes("? for shortcuts"),
        );

        const before = world.prompts().length;
        await page.click("#prompt");
        await page.keyboard.type("console line one");
        await page.keyboard.press("Shift+Enter");
        await page.keyboard.type("console line two");
        // At a desk Enter sends; on a touch screen Enter is the only way to a new line, so the
        // button sends.
        if (viewport.name === "phone") await page.click('.send-box button[type="submit"]');
        else await page.keyboard.press("Enter");
        await page.waitForSelector(".send-box .notice");
        // Delivered is confirmed by the agent's own hook; its request to the model follows.
        for (let i = 0; i < 100 && world.prompts().length === before; i++) await Bun.sleep(50);
        expect(world.prompts().slice(before)).toEqual(["console line one\nconsole line two"]);

        // The reply reaches the screen; the terminal shows it within a second of the pane.
        const reply = "Mock reply to: console line one";
        const deadline = Date.now() + 30_000;
        for (;;) {
          const pane = await world.api<Json>("GET", `/v1/sessions/${id}/pane`);
          if (String(pane.body.content).includes(reply)) break;
          if (Date.now() > deadline) throw new Error("the reply never reached the pane");
          await Bun.sleep(50);
        }
        await page.waitForFunction(
          (wanted) => document.querySelector(".xterm-rows")?.textContent?.includes(wanted),
          reply,
          {
            timeout: 1_000,
          },
        );
        expect(await terminalText(page)).toContain(reply);
        await page.screenshot({ path: join(shots, `console-${viewport.name}-session.png`) });
        expect(problems).toEqual([]);
      } finally {
        await close();
        await kill(id);
      }
    }, 120_000);
  });
}

describe("the server view", () => {
  test("a dead letter is retried from the channels page and delivered", async () => {
    const { id } = await createSession();
    // The receiver answers 429 "retry at once" four times: a dead letter within a second or so.
    const deadline = Date.now() + 30_000;
    while ((await world.api<Json[]>("GET", "/v1/webhooks/dead-letter")).body.length === 0) {
      if (Date.now() > deadline) throw new Error("no dead letter");
      await Bun.sleep(100);
    }
    const { page, problems, close } = await open(VIEWPORTS[0], "#/server/channels");
    try {
      await page
        .waitForSelector('.dead-letters[data-channel="webhook"] .dead-letter', { timeout: 5000 })
        .catch(async (e) => {
          console.log("DEBUG", await page.content());
          throw e;
        });
      expect(await page.textContent(".dead-letter")).toContain("session.created");
      receiverUp = true;
      await page.click('.dead-letters[data-channel="webhook"] button.retry');
      await page.waitForSelector("#no-dead-letters");
      // Requeued, then delivered by the channel's worker: the receiver gets it.
      for (let i = 0; i < 100 && !received.some((e) => e.session?.id === id); i++) await Bun.sleep(50);
      expect(received.map((e) => [e.event, e.session?.id])).toContainEqual(["session.created", id]);
      await page.screenshot({ path: join(shots, "console-desk-channels.png") });
      expect(problems).toEqual([]);
    } finally {
      await close();
      await kill(id);
    }
  }, 60_000);
});

describe("forms and server views", () => {
  test("the new-session form shows the API's refusal, then starts a session and opens it", async () => {
    const { page, problems, close } = await open(VIEWPORTS[0], "#/new");
    const started: string[] = [];
    try {
      await page.fill('#new-session input[name="workDir"]', "not/absolute");
      await page.click('#new-session button[type="submit"]');
      await page.waitForSelector("#new-error");
      expect(await page.textContent("#new-error")).toBe(
        `workDir must be an absolute path, got "not/absolute" (INVALID_WORKDIR)`,
      );

      const workDir = tempDir("ag-console-form-");
      await page.fill('#new-session input[name="workDir"]', workDir);
      await page.fill('#new-session input[name="name"]', "from-the-form");
      await page.fill('#new-session textarea[name="prompt"]', "say hello");
      await page.click('#new-session button[type="submit"]');
      await page.waitForSelector('.session-view h2:text("from-the-form")');
      const id = await page.getAttribute(".session-view", "data-id");
      started.push(id!);
      expect(page.url()).toContain(`#/sessions/${id}`);
      const session = await world.api<Json>("GET", `/v1/sessions/${id}`);
      expect(session.body).toMatchObject({ name: "from-the-form", workDir });
      // The transcript follows: the prompt, then the agent's answer.
      await page.waitForSelector('.messages [data-kind="prompt"]:has-text("say hello")', { timeout: 30_000 });
      await page.waitForSelector('.messages [data-kind="text"]', { timeout: 30_000 });
      // Chromium logs the refused request itself (the 400 asked for above); nothing else.
      expect(problems.filter((p) => !p.includes("status of 400 (Bad Request)"))).toEqual([]);
      expect(problems.length).toBeLessThanOrEqual(1);
    } finally {
      await close();
      for (const id of started) await kill(id);
    }
  }, 90_000);

  test("keys: created with scopes and shown once, listed by prefix, revoked; the audit log pages", async () => {
    const { page, problems, close } = await open(VIEWPORTS[0], "#/server/keys");
    try {
      await page.fill('.new-key input[name="name"]', "phone");
      await page.check('.new-key input[value="sessions:read"]');
      await page.check('.new-key input[value="sessions:write"]');
      await page.click('.new-key button[type="submit"]');
      await page.waitForSelector("#created-key");
      const key = (await page.textContent("#created-key"))!;
      // The key works, with exactly its scopes.
      const asKey = (path: string) =>
        fetch(`${world.ag.url}${path}`, { headers: { authorization: `Bearer ${key}` } });
      expect((await asKey("/v1/sessions")).status).toBe(200);
      expect((await asKey("/v1/audit")).status).toBe(403);
      await page.waitForSelector('#keys tbody tr:has-text("phone")');
      expect(await page.textContent('#keys tbody tr:has-text("phone")')).toContain(
        "sessions:read, sessions:write",
      );
      // Shown once: gone when dismissed, never listed.
      await page.click('.created-key button:text("Done")');
      expect(await page.content()).not.toContain(key);

      page.once("dialog", (d) => d.accept());
      await page.click('#keys tbody tr:has-text("phone") button:text("Revoke")');
      await page.waitForSelector('#keys tbody tr:has-text("phone")', { state: "detached" });
      expect((await asKey("/v1/sessions")).status).toBe(401);

      await page.click('a[href="#/server/audit"]');
      await page.waitForSelector('#audit tbody tr:has-text("key.create")');
      await page.click('#audit button:text("Verify the chain")');
      await page.waitForSelector('#audit [role="status"]:has-text("Chain intact")');
      expect(problems).toEqual([]);
    } finally {
      await close();
    }
  }, 60_000);

  test("a dark system gets the dark theme", async () => {
    const context = await browser.newContext({ colorScheme: "dark" });
    const page = await context.newPage();
    try {
      await page.goto(`${world.ag.url}/dashboard/`);
      await page.waitForSelector("#token-form:not([hidden])");
      const background = await page.evaluate(() => getComputedStyle(document.body).backgroundColor);
      const [r, g, b] = background.match(/\d+/g)!.map(Number);
      expect(r! + g! + b!).toBeLessThan(3 * 60);
    } finally {
      await context.close();
    }
  });
});

test("the screenshots were written", () => {
  for (const name of ["desk-permission", "phone-permission", "desk-question", "phone-question"])
    expect(existsSync(join(shots, `console-${name}.png`))).toBe(true);
});
