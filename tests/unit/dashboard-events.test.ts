import { expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { EVENT_NAMES } from "../../src/events/names.ts";

/**
 * EventSource has no wildcard listener, so the dashboard lists the event names it follows; they
 * must be the catalog's, or a reconnect would resume from a stale event id.
 */
test("the dashboard listens to exactly the event catalog's names", () => {
  const source = readFileSync(join(import.meta.dir, "../../public/app.js"), "utf8");
  const block = source.match(/const EVENT_NAMES = \[([^\]]*)\]/)?.[1] ?? "";
  const names = [...block.matchAll(/"([^"]+)"/g)].map((m) => m[1]);
  expect(names).toEqual([...EVENT_NAMES]);
});
