import { expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { buildDashboard } from "../../scripts/dashboard.ts";
import { EVENT_NAMES } from "../../src/events/names.ts";
import { tempDir } from "../helpers/temp.ts";

/**
 * EventSource has no wildcard listener, so the dashboard listens to each name of the catalog; it
 * imports them from the catalog itself, and the built page must carry every one of them, or a
 * reconnect would resume from a stale event id.
 */
test("the built dashboard listens to every name of the event catalog", async () => {
  const out = await buildDashboard(tempDir("ag-dash-"));
  const app = readFileSync(join(out, "app.js"), "utf8");
  for (const name of EVENT_NAMES) expect(app).toContain(`"${name}"`);
  // The page is whole: its shell, its styles, and no inline script for the CSP to refuse.
  const html = readFileSync(join(out, "index.html"), "utf8");
  expect(html).toContain('src="app.js"');
  expect(html).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/);
}, 30_000);
