import { atRunEnd } from "./cleanup.ts";

/**
 * A busy machine: `count` processes that spin a core each, for at most `maxMs` (they end by
 * themselves if a test dies), ended by `stop()` (by PID: only what this started).
 */
export function saturateCores(count = 2, maxMs = 300_000): { stop(): Promise<void> } {
  const spin = `const end = Date.now() + ${maxMs}; while (Date.now() < end) {}`;
  const procs = Array.from({ length: count }, () =>
    Bun.spawn([process.execPath, "-e", spin], { stdout: "ignore", stderr: "ignore" }),
  );
  const stop = async () => {
    for (const proc of procs) if (proc.exitCode === null) proc.kill("SIGKILL");
    await Promise.all(procs.map((proc) => proc.exited));
  };
  atRunEnd(() => {
    for (const proc of procs) if (proc.exitCode === null) proc.kill("SIGKILL");
  });
  return { stop };
}
