import type { StrayReaper } from "../host/index.ts";
import type { Clock } from "../shared/clock.ts";

/**
 * Agent processes that ag has told to end and that may still be on their way out: closing the
 * window hangs the agent up, and it writes its last transcript lines and hooks for a moment after.
 * A resume of the same conversation waits for it: two agents on one conversation, one starting
 * while the other exits, lost the new one's turn from the transcript (seen under load).
 * Given a reaper, what the agent started is marked before its window closes and whatever of it
 * outlives the agent is ended (host/strays.ts): a killed session takes its commands with it.
 */
export interface Exits {
  /** The agent of session `id` (process `pid`) is about to be ended (call before its window closes). */
  ending(id: string, pid: number | null): Promise<void>;
  /** Resolves once that process is gone, or after `timeoutMs`; at once when none is known. */
  gone(id: string, timeoutMs?: number): Promise<void>;
}

const POLL_MS = 50;
/** How long an ended agent may take to exit before what it started is ended anyway. */
const EXIT_WAIT_MS = 10_000;

export function createExits(
  clock: Clock,
  reaper?: StrayReaper,
  report: (detail: string) => void = () => {},
): Exits {
  const pids = new Map<string, number>();
  async function exited(pid: number, timeoutMs: number): Promise<void> {
    const deadline = clock.now() + timeoutMs;
    while (isAlive(pid) && clock.now() < deadline) {
      await new Promise<void>((resolve) => clock.setTimer(resolve, POLL_MS));
    }
  }
  return {
    async ending(id, pid) {
      if (pid === null) return;
      pids.set(id, pid);
      if (!reaper) return;
      const marks = await reaper.mark(pid).catch(() => []);
      if (marks.length === 0) return;
      void (async () => {
        await exited(pid, EXIT_WAIT_MS);
        const ended = await reaper.end(marks);
        if (ended) report(`session ${id}: ended ${ended} process(es) its agent left running`);
      })().catch(() => {});
    },
    async gone(id, timeoutMs = 5_000) {
      const pid = pids.get(id);
      if (pid === undefined) return;
      await exited(pid, timeoutMs);
      pids.delete(id);
    },
  };
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}
