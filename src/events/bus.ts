import type { Logger } from "../shared/log.ts";
import type { EventName } from "./names.ts";

export interface EventSession {
  id: string;
  name: string;
  workDir: string;
}

/** One event as every subscriber sees it (CONTRACT §5 shape, plus an increasing id). */
export interface AgEvent {
  id: number;
  event: EventName;
  timestamp: string;
  session?: EventSession;
  detail: string;
  meta: Record<string, unknown>;
}

export type EventInput = Omit<AgEvent, "id" | "timestamp" | "meta"> & { meta?: Record<string, unknown> };

export interface EventBus {
  /** Returns at once: subscribers never slow the publisher, and one that throws is only logged. */
  publish(input: EventInput): AgEvent;
  subscribe(listener: (event: AgEvent) => void): () => void;
  /** Events after `id` still in the ring (for SSE Last-Event-ID replay). */
  since(id: number): AgEvent[];
}

export function createEventBus(
  options: {
    logger?: Logger;
    ringSize?: number;
    now?: () => number;
    /**
     * The first event's id. The server starts from its start time in microseconds, so ids keep
     * increasing across restarts and a client's Last-Event-ID from an earlier run is older than
     * every event of this one (it gets them all, after a gap notice) instead of matching new ones.
     */
    firstId?: number;
  } = {},
): EventBus {
  const ringSize = options.ringSize ?? 1000;
  const now = options.now ?? Date.now;
  const listeners = new Set<(event: AgEvent) => void>();
  const ring: AgEvent[] = [];
  let nextId = options.firstId ?? 1;

  return {
    publish(input) {
      const event: AgEvent = {
        id: nextId++,
        timestamp: new Date(now()).toISOString(),
        meta: {},
        ...input,
      } as AgEvent;
      ring.push(event);
      if (ring.length > ringSize) ring.shift();
      for (const listener of listeners) {
        try {
          listener(event);
        } catch (error) {
          options.logger?.error(`event subscriber failed on ${event.event}`, error);
        }
      }
      return event;
    },
    subscribe(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    since(id) {
      return ring.filter((e) => e.id > id);
    },
  };
}
