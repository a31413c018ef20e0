import type { Logger } from "./log.ts";

/**
 * The background runs of a service's records (a pipeline, a consensus review), one per id: an
 * unexpected failure is logged and answers the record as it was; a finished run is forgotten.
 * The saved record is the truth: runs stop with the process and are resumed from it at the next
 * start.
 */
export interface Runs<T> {
  /** Tracks `running` as the run of `id`; `onDone` runs once it is over, whichever way. */
  launch(id: string, running: Promise<T>, record: T, onDone?: () => void): void;
  get(id: string): Promise<T> | undefined;
  has(id: string): boolean;
  /** Forgets every run (the process stops). */
  clear(): void;
}

/** `what` names a record in the log: "pipeline", "consensus". */
export function createRuns<T>(what: string, logger: Logger): Runs<T> {
  const runs = new Map<string, Promise<T>>();
  return {
    launch(id, running, record, onDone) {
      const tracked = running
        .catch((error) => {
          logger.error(`${what} ${id} stopped unexpectedly`, error);
          return record;
        })
        .finally(() => {
          runs.delete(id);
          onDone?.();
        });
      runs.set(id, tracked);
    },
    get: (id) => runs.get(id),
    has: (id) => runs.has(id),
    clear: () => runs.clear(),
  };
}
