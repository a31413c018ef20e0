import type { SessionDrivers } from "../../drivers/index.ts";
import type { Clock } from "../../shared/clock.ts";
import type { Logger } from "../../shared/log.ts";
import type { LiveSessions } from "../live/registry.ts";
import type { SessionRepo } from "../repo.ts";

/** Terminal sessions stay listed this long, then are pruned (CONTRACT §2). */
export const KEEP_ENDED_MS = 24 * 60 * 60 * 1000;

/**
 * Hands each driver its stored running sessions at start: tmux re-adopts them by window tag (and
 * again whenever its server comes back), acp reopens them. From then on the drivers carry what
 * happens to them as events (nothing here polls); ended sessions are pruned after a day.
 */
export interface Supervisor {
  start(): Promise<void>;
  stop(): void;
}

export function createSupervisor(deps: {
  repo: Pick<SessionRepo, "live" | "pruneEnded">;
  live: Pick<LiveSessions, "all" | "forget">;
  drivers: Pick<SessionDrivers, "all">;
  clock: Clock;
  logger: Logger;
}): Supervisor {
  let cancelPrune: (() => void) | null = null;

  function schedulePrune(): void {
    const removed = deps.repo.pruneEnded(new Date(deps.clock.now() - KEEP_ENDED_MS).toISOString());
    if (removed) deps.logger.debug(`pruned ${removed} ended session(s)`);
    cancelPrune = deps.clock.setTimer(schedulePrune, 60 * 60 * 1000);
  }

  return {
    async start() {
      // A hibernated session stays so: it has no agent to adopt or reopen (docs/hibernation.md).
      const running = deps.repo.live().filter((rec) => !rec.hibernatedAt);
      // Side by side: ACP children reopening do not hold the tmux sessions back.
      await Promise.all(
        deps.drivers.all().map((driver) => driver.start(running.filter((r) => r.driver === driver.name))),
      );
      schedulePrune();
    },
    stop() {
      for (const driver of deps.drivers.all()) driver.stop();
      cancelPrune?.();
      for (const session of deps.live.all()) deps.live.forget(session.id);
    },
  };
}
