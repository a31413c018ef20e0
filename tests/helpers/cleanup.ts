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

/** In the reverse order of registration, each awaited: what was made last goes first. */
export async function runCleanups(): Promise<void> {
  for (const cleanup of pending.splice(0).reverse()) {
    try {
      await cleanup();
    } catch {
      // one failed cleanup must not stop the others
    }
  }
}
