import { DEATH_FORMAT, parseDeath } from "./commands.ts";

/** Follow-up of a pane seen dead but unreaped: [wait ms, make tmux reap first]. */
const UNREAPED_FOLLOW_UP: ReadonlyArray<readonly [number, boolean]> = [
  [50, false],
  [1000, true],
  [1500, false],
];

export interface DeathTracker {
  /** A DEATH_FORMAT value reported for a pane (by the subscription). */
  observe(paneId: string, value: string): void;
  forget(paneId: string): void;
  clear(): void;
}

/**
 * Turns the pane-death subscription's reports into one pane-died per death. A pane can be seen
 * dead before tmux reaped its process (terminal closed first): its status normally follows
 * within milliseconds, the subscription would bring it a second later, but tmux 3.3a can leave
 * the process unreaped until its next SIGCHLD (seen under load). So: look again shortly, then
 * make tmux fork and reap a child (`run-shell true`), and in the end report the death without a
 * status. A bounded follow-up of one event, not a poll.
 */
export function createDeathTracker(deps: {
  run(args: string[]): Promise<string[]>;
  isConnected(): boolean;
  died(paneId: string, status: number | null): void;
  followUp?: ReadonlyArray<readonly [number, boolean]>;
}): DeathTracker {
  const followUp = deps.followUp ?? UNREAPED_FOLLOW_UP;
  const reported = new Set<string>();
  const confirming = new Set<string>();

  function report(paneId: string, status: number | null): void {
    if (reported.has(paneId)) return;
    reported.add(paneId);
    deps.died(paneId, status);
  }

  async function confirm(paneId: string): Promise<void> {
    if (confirming.has(paneId)) return;
    confirming.add(paneId);
    try {
      for (const [delayMs, nudge] of followUp) {
        await Bun.sleep(delayMs);
        if (reported.has(paneId) || !deps.isConnected()) return;
        if (nudge) await deps.run(["run-shell", "true"]).catch(() => {});
        const [value] = await deps.run(["display-message", "-p", "-t", paneId, DEATH_FORMAT]).catch(() => []);
        const death = parseDeath(value ?? "");
        if (death === null) return; // gone, or alive again
        if (death !== "unreaped") return report(paneId, death.status);
      }
      report(paneId, null);
    } finally {
      confirming.delete(paneId);
    }
  }

  return {
    observe(paneId, value) {
      const death = parseDeath(value);
      if (death === null) reported.delete(paneId);
      else if (death === "unreaped") void confirm(paneId);
      else report(paneId, death.status);
    },
    forget(paneId) {
      reported.delete(paneId);
    },
    clear() {
      reported.clear();
    },
  };
}
