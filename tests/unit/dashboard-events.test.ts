import { expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
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
  const html = readFileSync(join(out, "index.html"), "utf8");
  const script = html.match(/src="(app-[0-9a-z]{8}\.js)"/)?.[1];
  expect(script).toBeDefined();
  const app = readFileSync(join(out, script!), "utf8");
  // A name is a string or (minified) an object key of the catalog.
  const missing = EVENT_NAMES.filter((name) => {
    const escaped = name.replace(".", "\\.");
    return !new RegExp(`["']${escaped}["']|[{,]${escaped}:`).test(app);
  });
  expect(missing).toEqual([]);
  // And the sources keep no list of their own (naming an event they act on is fine).
  const sources = join(import.meta.dir, "..", "..", "public", "src");
  for (const file of readdirSync(sources, { recursive: true })
    .map(String)
    .filter((f) => /\.tsx?$/.test(f))) {
    const text = readFileSync(join(sources, file), "utf8");
    const named = EVENT_NAMES.filter((name) => text.includes(`"${name}"`));
    expect({ file, list: named.length > 2 }).toEqual({ file, list: false });
  }
  // The page is whole: its shell, its styles, and no inline script for the CSP to refuse.
  expect(html).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/);
}, 30_000);
