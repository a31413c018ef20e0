import { type Admission, createAdmission, RETRY_AFTER_SECONDS, type Reservation } from "./admission.ts";
import { createPressureWatch } from "./pressure.ts";
import { availableBytes } from "./procfs.ts";
import { createAdmissionQueue, type Waiting } from "./queue.ts";
import { createStrayReaper, type StrayReaper } from "./strays.ts";
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
  /** Launches whose agent has not started yet, and the room each still holds. */
  starting: Array<{ agent: string; sessionId: string | null; heldMb: number }>;
  waiting: Waiting[];
}

export interface HostGuard {
  /** Process trees by root pid (the sessions' agent figures). */
  trees: HostUsage["trees"];
  /** What the host can still give (bytes), or null without /proc. */
  available(): Promise<number | null>;
  /**
   * Room for one more agent, held for its launch: refused at once, or (given who waits) queued
   * until there is. Released by the launch if it fails, else when its agent has started.
   */
  admit(agent: string, waitAs?: string): Promise<Reservation>;
  /** The session's agent has started (its first prompt box or dialog) or its session ended. */
  agentStarted(sessionId: string): void;
  /** A session ended (memory may come back) or a turn started (agents grow while they work). */
  sessionEnded(): void;
  /** Ends what killed sessions' agents left running; the queue looks again when it did. */
  strays: StrayReaper;
  turnStarted(): void;
  state(): Promise<AdmissionState>;
  close(): void;
}

const MB = 1024 * 1024;
/** When the queue looks again after a session ended: its agent exits a moment after its window. */
const EXIT_SETTLE_MS = [1000, 3000];

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
  /** What the host can still give (bytes); the host's /proc unless given. */
  available?: () => Promise<number | null>;
}): HostGuard {
  const usage = createHostUsage();
  const available =
    deps.available ??
    (async () => {
      const memory = await usage.memory();
      return memory ? availableBytes(memory) : null;
    });
  const admission: Admission = createAdmission({
    reserveMb: deps.reserveMb,
    available,
    running: deps.running,
    // Room a launch held came back (it failed, or its agent is measured from now on).
    freed: () => queue.poke(),
  });
  // Batch items, pipeline stages and reviewers wait for room instead of failing.
  const queue = createAdmissionQueue({ admission, maxWaiting: 100, retryMs: RETRY_AFTER_SECONDS * 1000 });
  const pressure = createPressureWatch({ ...deps, available });
  // An ended session's agent frees its memory only once its process has exited, a moment after
  // its window closed: the queue looks again then (and still every 30 s at the latest).
  const later = new Set<ReturnType<typeof setTimeout>>();
  const pokeSoon = (ms: number) => {
    const timer = setTimeout(() => {
      later.delete(timer);
      queue.poke();
    }, ms);
    timer.unref?.();
    later.add(timer);
  };
  const reaper = createStrayReaper();
  return {
    trees: (roots) => usage.trees(roots),
    strays: {
      mark: (root) => reaper.mark(root),
      async end(marks) {
        const ended = await reaper.end(marks);
        if (ended) queue.poke();
        return ended;
      },
    },
    available,
    admit: (agent, waitAs) => (waitAs ? queue.enter(agent, waitAs) : admission.reserve(agent)),
    agentStarted: (sessionId) => admission.started(sessionId),
    sessionEnded() {
      queue.poke();
      if (queue.waiting().length) for (const ms of EXIT_SETTLE_MS) pokeSoon(ms);
    },
    turnStarted: () => void pressure.look().catch(() => {}),
    async state() {
      const bytes = await available();
      return {
        reserveMb: deps.reserveMb,
        availableMb: bytes === null ? null : Math.floor(bytes / MB),
        expectedMb: Object.fromEntries(
          Object.entries(admission.measured()).map(([agent, b]) => [agent, Math.round(b / MB)]),
        ),
        starting: admission.holding().map(({ agent, sessionId, bytes }) => ({
          agent,
          sessionId,
          heldMb: Math.round(bytes / MB),
        })),
        waiting: queue.waiting(),
      };
    },
    close() {
      for (const timer of later) clearTimeout(timer);
      later.clear();
      queue.close();
    },
  };
}
