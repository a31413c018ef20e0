import type { Logger } from "../shared/log.ts";
import {
  type EventData,
  type EventName,
  type EventPayload,
  type EventSession,
  type PendingPermission,
  STATUS_EVENT_NAMES,
  type StatusEventName,
} from "./names.ts";

export type { EventSession };

/**
 * One event as every subscriber sees it (CONTRACT §5 shape, plus an increasing id). A union over
 * the catalog's names: checking `event.event` narrows `meta` to that event's payload.
 */
export type AgEvent<N extends EventName = EventName> = N extends EventName
  ? EventData<N> & { id: number }
  : never;

/** What a publisher gives: the event without the id and time the bus adds. */
export type EventInput<N extends EventName = EventName> = N extends EventName
  ? { event: N; session?: EventSession; detail: string; meta: EventPayload<N> }
  : never;

/** A change of a session's state (its meta has status, previous, pendingPermission, source). */
export function isStatusEvent(event: AgEvent): event is AgEvent<StatusEventName> {
  return (STATUS_EVENT_NAMES as readonly EventName[]).includes(event.event);
}

/** The prompt an event is about or that waits beside it (status events, permission timeouts). */
export function pendingPermissionOf(event: AgEvent): PendingPermission | null {
  return "pendingPermission" in event.meta ? event.meta.pendingPermission : null;
}

export interface EventBus {
  /**
   * Returns at once: subscribers never slow the publisher, and one that throws is only logged.
   * `meta` must be the catalog's payload of the event (src/events/names.ts).
   */
  publish<N extends EventName>(input: EventInput<N>): AgEvent<N>;
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
  /** Events published while another is being handed out wait their turn. */
  const queue: AgEvent[] = [];
  let dispatching = false;

  /**
   * Every subscriber sees every event in id order. A subscriber that publishes (a teammate's end
   * is its parent's news) must not have its event overtake the one being handed out: subscribers
   * later in line would see them reversed, and SSE, which never sends an id at or below one it
   * sent, would drop the older one.
   */
  function dispatch(): void {
    dispatching = true;
    try {
      for (let event = queue.shift(); event; event = queue.shift()) {
        for (const listener of listeners) {
          try {
            listener(event);
          } catch (error) {
            options.logger?.error(`event subscriber failed on ${event.event}`, error);
          }
        }
      }
    } finally {
      dispatching = false;
    }
  }

  return {
    publish<N extends EventName>(input: EventInput<N>): AgEvent<N> {
      const event = { id: nextId++, timestamp: new Date(now()).toISOString(), ...input } as AgEvent<N>;
      ring.push(event);
      if (ring.length > ringSize) ring.shift();
      queue.push(event);
      if (!dispatching) dispatch();
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
