import type { AgEvent } from "../events/bus.ts";
import type { Session } from "../sessions/index.ts";
import type { EventRow, FleetStore, HostRow } from "./store.ts";

/**
 * What this host knows of the fleet, kept in memory so that a list or a lookup never waits on
 * the database: the hosts with their leases, every host's session summaries, and the newest
 * events for SSE replay. Filled from the database at (re)connection, then kept current by the
 * notifications (docs/fleet.md, "Push").
 */

/** Events held for Last-Event-ID replay, like the bus's ring. */
export const FLEET_RING_SIZE = 1000;
/** Events fetched per query while catching up. */
const EVENT_PAGE = 500;

/** A fleet event: the event as its host published it, numbered by the fleet, with its host. */
export type FleetEvent = AgEvent & { host: string };

export interface RemoteSession {
  session: Session;
  host: string;
}

export interface Mirror {
  hosts(): HostRow[];
  host(name: string): HostRow | null;
  sessions(): RemoteSession[];
  session(id: string): RemoteSession | null;
  /** The event feed (SSE): every host's events in the fleet's order. */
  subscribe(listener: (event: FleetEvent) => void): () => void;
  since(seq: number): FleetEvent[];
  /** Everything read again: at the first connection and after the notifications were lost. */
  reload(): Promise<void>;
  refreshHosts(): Promise<void>;
  /** A notification's payload (store.ts CHANNEL). */
  notified(payload: string): Promise<void>;
  /**
   * A session another host just made at this host's request (a forwarded create or fork): known
   * here at once, before its notification, so the caller's next request finds it.
   */
  learn(session: Session, host: string): void;
}

export function createMirror(deps: {
  store: Pick<FleetStore, "hosts" | "sessions" | "session" | "eventsAfter" | "latestEvents">;
}): Mirror {
  let hosts = new Map<string, HostRow>();
  let sessions = new Map<string, RemoteSession>();
  const ring: FleetEvent[] = [];
  const listeners = new Set<(event: FleetEvent) => void>();
  /** The newest event seen; null until the first load. */
  let lastSeq: number | null = null;
  let catching: Promise<void> | null = null;
  let catchAgain = false;

  function parseSession(row: { id: string; host: string; data: string }): RemoteSession {
    return { session: JSON.parse(row.data) as Session, host: row.host };
  }

  function toEvent(row: EventRow): FleetEvent {
    return { ...(JSON.parse(row.data) as Omit<AgEvent, "id">), id: row.seq, host: row.host } as FleetEvent;
  }

  function hold(event: FleetEvent): void {
    // Two reads that overlap (a reload beside a notification's catch-up) hand out an event once.
    if (lastSeq !== null && event.id <= lastSeq) return;
    ring.push(event);
    if (ring.length > FLEET_RING_SIZE) ring.shift();
    lastSeq = event.id;
    for (const listener of listeners) listener(event);
  }

  /** Events after the newest seen, page by page; one catch-up at a time. */
  function catchUp(): Promise<void> {
    if (catching) {
      catchAgain = true;
      return catching;
    }
    catching = (async () => {
      try {
        do {
          catchAgain = false;
          for (;;) {
            const rows = await deps.store.eventsAfter(lastSeq ?? 0, EVENT_PAGE);
            for (const row of rows) hold(toEvent(row));
            if (rows.length < EVENT_PAGE) break;
          }
        } while (catchAgain);
      } finally {
        catching = null;
      }
    })();
    return catching;
  }

  async function refreshHosts(): Promise<void> {
    hosts = new Map((await deps.store.hosts()).map((h) => [h.name, h]));
  }

  return {
    hosts: () => [...hosts.values()],
    host: (name) => hosts.get(name) ?? null,
    sessions: () => [...sessions.values()],
    session: (id) => sessions.get(id) ?? null,
    subscribe(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    since: (seq) => ring.filter((e) => e.id > seq),
    async reload() {
      await refreshHosts();
      sessions = new Map((await deps.store.sessions()).map((row) => [row.id, parseSession(row)]));
      if (lastSeq === null) {
        const latest = await deps.store.latestEvents(FLEET_RING_SIZE);
        // The ring starts from the newest held before this host came; later ones come by catch-up.
        lastSeq ??= (latest[0]?.seq ?? 1) - 1;
        for (const row of latest) hold(toEvent(row));
      }
      await catchUp();
    },
    refreshHosts,
    learn(session, host) {
      if (!sessions.has(session.id)) sessions.set(session.id, { session, host });
    },
    async notified(payload) {
      const kind = payload.slice(0, 2);
      const key = payload.slice(2);
      if (kind === "e:") {
        if (lastSeq !== null && Number(key) > lastSeq) await catchUp();
      } else if (kind === "s:") {
        const row = await deps.store.session(key);
        if (row) sessions.set(row.id, parseSession(row));
      } else if (kind === "d:") {
        sessions.delete(key);
      } else if (kind === "h:") {
        await refreshHosts();
      }
    },
  };
}
