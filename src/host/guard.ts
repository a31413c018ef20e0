import { type Admission, createAdmission, RETRY_AFTER_SECONDS } from "./admission.ts";
import { createPressureWatch } from "./pressure.ts";
import { availableBytes } from "./procfs.ts";
import { createAdmissionQueue, type Waiting } from "./queue.ts";
import { createHostUsage, type HostUsage } from "./usage.ts";

/** A running session's agent as the guard weighs it. */
export interface RunningAgent {
  id: string;
  name: string;
  agent: string;
  rssBytes: number;
}

/** GET /v1/admission. */
export interface AdmissionState {
  reserveMb: number;
  availableMb: number | null;
  expectedMb: Record<string, number>;
  waiting: Waiting[];
}

export interface HostGuard {
  /** Process trees by root pid (the sessions' agent figures). */
  trees: HostUsage["trees"];
  /** What the host can still give (bytes), or null without /proc. */
  available(): Promise<number | null>;
  /** Room for one more agent: refused at once, or (given who waits) queued until there is. */
  admit(agent: string, waitAs?: string): Promise<void>;
  /** A session ended (memory may come back) or a turn started (agents grow while they work). */
  sessionEnded(): void;
  turnStarted(): void;
  state(): Promise<AdmissionState>;
  close(): void;
}

const MB = 1024 * 1024;

/**
 * The host's memory against the reserve (memoryReserveMb): what the agents cost, admission of new
 * ones, the queue of creates that may wait, and the note when memory runs short.
 */
export function createHostGuard(deps: {
  reserveMb: number;
  /** Each running session's agent and its resident memory. */
  running(): Promise<RunningAgent[]>;
  /** Where the memory-pressure note goes. */
  report(detail: string): void;
}): HostGuard {
  const usage = createHostUsage();
  const available = async () => {
    const memory = await usage.memory();
    return memory ? availableBytes(memory) : null;
  };
  const admission: Admission = createAdmission({
    reserveMb: deps.reserveMb,
    available,
    running: deps.running,
  });
  // Batch items, pipeline stages and reviewers wait for room instead of failing.
  const queue = createAdmissionQueue({ admission, maxWaiting: 100, retryMs: RETRY_AFTER_SECONDS * 1000 });
  const pressure = createPressureWatch({ ...deps, available });
  return {
    trees: (roots) => usage.trees(roots),
    available,
    admit: (agent, waitAs) => (waitAs ? queue.enter(agent, waitAs) : admission.check(agent)),
    sessionEnded: () => queue.poke(),
    turnStarted: () => void pressure.look().catch(() => {}),
    async state() {
      const bytes = await available();
      return {
        reserveMb: deps.reserveMb,
        availableMb: bytes === null ? null : Math.floor(bytes / MB),
        expectedMb: Object.fromEntries(
          Object.entries(admission.measured()).map(([agent, b]) => [agent, Math.round(b / MB)]),
        ),
        waiting: queue.waiting(),
      };
    },
    close: () => queue.close(),
  };
}
