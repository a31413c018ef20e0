import { afterAll } from "bun:test";
import { offCatalog } from "./helpers/catalog.ts";
import { runCleanups } from "./helpers/cleanup.ts";
import { installUnitGuard, unguarded, unitSpawns } from "./helpers/no-spawn.ts";

/** How long a run stopped by a signal may take to remove what it made. */
const SIGNAL_CLEANUP_MS = 20_000;

// A file under tests/unit that starts a process or a server fails (helpers/no-spawn.ts).
installUnitGuard();

// Preloaded for every `bun test` run (bunfig.toml): what the tests created is removed at the end,
// whichever files ran and however they ended. Removing every temp home of a whole run (real
// agents' included) takes longer than a test's default 5 s.
afterAll(() => unguarded(runCleanups), 60_000);

// A run ended by a signal (`timeout`'s TERM, Ctrl-C, a closed terminal, a cancelled CI job) runs
// no afterAll: its temp dirs, tmux servers and agents were left behind (measured: a unit file
// stopped by TERM after 4 s left 15 dirs). They are removed before it exits, within a bound; a
// second signal ends it at once.
for (const [signal, code] of [
  ["SIGINT", 130],
  ["SIGTERM", 143],
  ["SIGHUP", 129],
] as const) {
  process.once(signal, () => {
    const bound = new Promise((resolve) => setTimeout(resolve, SIGNAL_CLEANUP_MS));
    void Promise.race([unguarded(runCleanups), bound]).finally(() => process.exit(code));
  });
}

// Every event the tests' apps and runtimes published matched the event catalog (helpers/catalog.ts).
afterAll(() => {
  const found = offCatalog.splice(0);
  if (found.length > 0) {
    throw new Error(`events that do not match the catalog (src/events/names.ts):\n${found.join("\n")}`);
  }
});

// No unit test started a process or a server, even one the code under test caught the refusal of.
afterAll(() => {
  const found = unitSpawns.splice(0);
  if (found.length > 0) {
    throw new Error(`unit tests that spawn or listen (move them to tests/integration):\n${found.join("\n")}`);
  }
});
