import type { Clock } from "../shared/clock.ts";

/**
 * Agent processes that ag has told to end and that may still be on their way out: closing the
 * window hangs the agent up, and it writes its last transcript lines and hooks for a moment after.
 * A resume of the same conversation waits for it: two agents on one conversation, one starting
 * while the other exits, lost the new one's turn from the transcript (seen under load).
 */
export interface Exits {
  /** The agent of session `id` (process `pid`) is being ended. */
  ending(id: string, pid: number | null): void;
  /** Resolves once that process is gone, or after `timeoutMs`; at once when none is known. */
  gone(id: string, timeoutMs?: number): Promise<void>;
}

const POLL_MS = 50;

export function createExits(clock: Clock): Exits {
  const pids = new Map<string, number>();
  return {
    ending(id, pid) {
      if (pid !== null) pids.set(id, pid);
    },
    async gone(id, timeoutMs = 5_000) {
      const pid = pids.get(id);
      if (pid === undefined) return;
      const deadline = clock.now() + timeoutMs;
      while (isAlive(pid) && clock.now() < deadline) {
        await new Promise<void>((resolve) => clock.setTimer(resolve, POLL_MS));
      }
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
