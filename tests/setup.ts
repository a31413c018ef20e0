import { afterAll } from "bun:test";
import { offCatalog } from "./helpers/catalog.ts";
import { runCleanups } from "./helpers/cleanup.ts";

// Preloaded for every `bun test` run (bunfig.toml): what the tests created is removed at the end,
// whichever files ran and however they ended. Removing every temp home of a whole run (real
// agents' included) takes longer than a test's default 5 s.
afterAll(runCleanups, 60_000);

// Every event the tests' apps and runtimes published matched the event catalog (helpers/catalog.ts).
afterAll(() => {
  const found = offCatalog.splice(0);
  if (found.length > 0) {
    throw new Error(`events that do not match the catalog (src/events/names.ts):\n${found.join("\n")}`);
  }
});
