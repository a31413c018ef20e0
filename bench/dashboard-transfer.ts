/**
 * What the console costs the network: the bytes Chromium receives (headers and bodies, as sent:
 * compressed) for a first visit with an empty cache, for a reload with a warm cache, and for the
 * first session page (the xterm.js chunk). The console's own files are counted apart from the
 * API's answers (health, the list, metrics; the event stream never ends and is left out).
 * `bun run build.ts && bun bench/dashboard-transfer.ts [path/to/ag]`
 */
import { resolve } from "node:path";
import type { Page } from "playwright-core";
import { CHROMIUM_ARGS, findChromium, launchChromium } from "../src/screenshot/index.ts";
import { startAg } from "../tests/helpers/binary.ts";
import { transferred } from "../tests/helpers/browser.ts";
import { tempDir } from "../tests/helpers/temp.ts";

const binary = resolve(process.argv[2] ?? "dist/ag");
const ag = await startAg(binary);

const live = (page: Page) => page.waitForSelector('#live[data-state="live"]');

const created = await fetch(`${ag.url}/v1/sessions`, {
  method: "POST",
  headers: { "content-type": "application/json", authorization: `Bearer ${ag.token()}` },
  body: JSON.stringify({ name: "measured", workDir: tempDir(), agentCommand: "sh -c 'sleep 600'" }),
});
const session = (await created.json()) as { id: string };

const browser = await launchChromium(findChromium(null).path!, CHROMIUM_ARGS);
const context = await browser.newContext();
const page = await context.newPage();
const cdp = await context.newCDPSession(page);
await cdp.send("Network.enable");

const first = await transferred(cdp, async () => {
  await page.goto(`${ag.url}/dashboard/`);
  await live(page);
});
const reload = await transferred(cdp, async () => {
  await page.reload();
  await live(page);
});
const sessionPage = await transferred(cdp, async () => {
  await page.evaluate((id) => {
    location.hash = `#/sessions/${id}`;
  }, session.id);
  await page.waitForSelector('.terminal-state[data-state="live"]');
});
const sessionReload = await transferred(cdp, async () => {
  await page.reload();
  await page.waitForSelector('.terminal-state[data-state="live"]');
});

await browser.close();
await ag.stop();
const kb = (n: number) => Math.round(n / 102.4) / 10;
console.log(
  JSON.stringify(
    {
      firstLoad: { consoleKB: kb(first.console), apiKB: kb(first.api), files: first.files },
      warmReload: { consoleKB: kb(reload.console), apiKB: kb(reload.api), files: reload.files },
      firstSessionPage: {
        consoleKB: kb(sessionPage.console),
        apiKB: kb(sessionPage.api),
        files: sessionPage.files,
      },
      sessionPageReload: { consoleKB: kb(sessionReload.console), files: sessionReload.files },
    },
    null,
    2,
  ),
);
process.exit(0);
