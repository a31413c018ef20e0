import { AgError, isAgError } from "../shared/errors.ts";
import type { Admission, Reservation } from "./admission.ts";

/** One create waiting for room, as GET /v1/admission shows it. */
export interface Waiting {
  agent: string;
  /** Who waits: `batch`, `pipeline:<id>`, `consensus:<id>`. */
  for: string;
  since: string;
}

/**
 * Creates that may wait for memory (batch items, pipeline stages, consensus reviewers) queue
 * here instead of failing: first come, first served — only the head is tried, so a small agent
 * never starves a big one — and woken when a session ends (memory came back) or, at the latest,
 * every `retryMs`. At most `maxWaiting` wait; one more is refused at once.
 */
export interface AdmissionQueue {
  /** Resolves with its room once one more `agent` fits; throws HOST_MEMORY_LOW only when the queue is full. */
  enter(agent: string, who: string): Promise<Reservation>;
  /** Something freed memory (a session ended): try the head now. */
  poke(): void;
  waiting(): Waiting[];
  /** Fails every waiter (shutdown). */
  close(): void;
}

export function createAdmissionQueue(deps: {
  admission: Pick<Admission, "reserve">;
  maxWaiting: number;
  retryMs: number;
  now?: () => number;
}): AdmissionQueue {
  const now = deps.now ?? Date.now;
  const queue: Array<Waiting & { resolve(room: Reservation): void; reject(error: unknown): void }> = [];
  let trying = false;
  let again = false;
  let timer: ReturnType<typeof setTimeout> | null = null;

  async function tryHead(): Promise<void> {
    if (trying) {
      again = true; // a waiter came (or memory came back) while the head was being tried
      return;
    }
    trying = true;
    try {
      while (queue.length > 0) {
        const head = queue[0]!;
        let room: Reservation;
        try {
          room = await deps.admission.reserve(head.agent);
        } catch (error) {
          if (isAgError(error) && error.code === "HOST_MEMORY_LOW") break; // still no room
          queue.shift();
          head.reject(error);
          continue;
        }
        queue.shift();
        head.resolve(room);
      }
    } finally {
      trying = false;
      if (again) {
        again = false;
        void tryHead();
      } else schedule();
    }
  }

  function schedule(): void {
    if (timer) clearTimeout(timer);
    timer = queue.length ? setTimeout(() => void tryHead(), deps.retryMs) : null;
    timer?.unref?.();
  }

  return {
    enter(agent, who) {
      if (queue.length >= deps.maxWaiting)
        return Promise.reject(
          new AgError("HOST_MEMORY_LOW", `${queue.length} creates already wait for memory`, {
            retryAfterSeconds: Math.ceil(deps.retryMs / 1000),
          }),
        );
      // In line, even with nobody ahead: the head is tried at once, and order is kept.
      const entered = new Promise<Reservation>((resolve, reject) => {
        queue.push({ agent, for: who, since: new Date(now()).toISOString(), resolve, reject });
      });
      void tryHead();
      return entered;
    },
    poke: () => void tryHead(),
    waiting: () => queue.map(({ agent, for: who, since }) => ({ agent, for: who, since })),
    close() {
      if (timer) clearTimeout(timer);
      for (const waiter of queue.splice(0)) waiter.reject(new AgError("HOST_MEMORY_LOW", "ag is stopping"));
    },
  };
}
