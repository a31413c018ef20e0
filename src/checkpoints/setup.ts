import type { Database } from "bun:sqlite";
import { join } from "node:path";
import type { Config } from "../config/schema.ts";
import type { EventBus } from "../events/bus.ts";
import type { SessionRecord } from "../sessions/index.ts";
import type { Clock } from "../shared/clock.ts";
import type { Logger } from "../shared/log.ts";
import { createCheckpointRepo } from "./repo.ts";
import { createCheckpointService } from "./service.ts";
import { createSessionCheckpoints } from "./sessions.ts";

export interface CheckpointsDeps {
  db: Database;
  stateDir: string;
  settings: Config["checkpoints"];
  tenantWorkdirs: Config["tenantWorkdirs"];
  clock: Clock;
  logger: Logger;
}

const MB = 1024 * 1024;
/**
 * How long a prompt waits for the checkpoint before it: the first checkpoint of a large folder
 * hashes every file (tens of seconds for 200 MB outside a repository: docs/benchmarks.md). Past
 * this the prompt goes, and the checkpoint finishes meanwhile (what the turn changes in its first
 * moments may then count as before it).
 */
export const PROMPT_WAIT_MS = 2_000;

/**
 * The checkpoints domain as the composition root uses it: the service over the state
 * database and <stateDir>/checkpoints, the session face, and what starts and stops it.
 */
export function createCheckpoints(deps: CheckpointsDeps) {
  const { settings } = deps;
  const service = createCheckpointService({
    repo: createCheckpointRepo(deps.db),
    root: join(deps.stateDir, "checkpoints"),
    clock: deps.clock,
    logger: deps.logger,
    settings: {
      maxFileBytes: Math.floor(settings.maxFileMb * MB),
      keepTurns: settings.keepTurns,
      keepDays: settings.keepDays,
    },
  });
  const sessions = createSessionCheckpoints({
    service,
    logger: deps.logger,
    runsAsOther: (tenantId) => tenantId !== null && Boolean(deps.tenantWorkdirs[tenantId]?.runAs),
  });
  return {
    sessions,
    /** For the sessions domain (nothing when checkpoints are off). */
    beforePrompt(session: SessionRecord, text: string): Promise<void> {
      if (!settings.enabled) return Promise.resolve();
      const taking = sessions.beforePrompt(session, text);
      return new Promise<void>((resolve, reject) => {
        const cancel = deps.clock.setTimer(() => {
          deps.logger.info(`session ${session.id}: its prompt goes before its checkpoint is done`);
          resolve();
        }, PROMPT_WAIT_MS);
        taking.then(
          () => {
            cancel();
            resolve();
          },
          (error) => {
            cancel();
            reject(error);
          },
        );
      });
    },
    /** Follows turn ends; the returned function stops it. */
    start(bus: Pick<EventBus, "subscribe">, find: (id: string) => SessionRecord | null): () => void {
      return settings.enabled ? sessions.follow(bus, find) : () => {};
    },
    /** The lines of sessions that no longer exist removed, unless kept (keepWhenDeleted). */
    async sweep(exists: (id: string) => boolean): Promise<void> {
      if (settings.keepWhenDeleted) return;
      const removed = await service.sweep(exists);
      if (removed > 0) deps.logger.info(`checkpoints of ${removed} deleted session(s) removed`);
    },
  };
}
