const stops: Array<() => void | Promise<void>> = [];
const pending: Array<() => void | Promise<void>> = [];

/**
 * Runs `fn` when the whole test run ends (tests/setup.ts, preloaded by bunfig.toml, calls
 * `runCleanups` from a global afterAll). An afterAll in a shared helper does not work: `bun test`
 * evaluates a helper module once per run, so a top-level hook cleans up after the first file
 * only, and `process.on("exit")` never fires under `bun test`. Heavy things (agents, servers)
 * are also stopped by the tests themselves as they finish.
 */
export function atRunEnd(fn: () => void | Promise<void>): void {
  pending.push(fn);
}

/**
 * Like atRunEnd, for what stops processes (a tmux server and its agents): these all run first,
 * together, and are awaited before anything is removed, so an agent still exiting cannot write
 * into a HOME removed under it, and the waits do not add up.
 */
export function atRunEndStop(fn: () => void | Promise<void>): void {
  stops.push(fn);
}

/** The stops together, then the rest in the reverse order of registration: what was made last goes first. */
export async function runCleanups(): Promise<void> {
  await Promise.all(
    stops.splice(0).map(async (stop) => {
      try {
        await stop();
      } catch {
        // one failed stop must not stop the others
      }
    }),
  );
  for (const cleanup of pending.splice(0).reverse()) {
    try {
      await cleanup();
    } catch {
      // one failed cleanup must not stop the others
    }
  }
}
