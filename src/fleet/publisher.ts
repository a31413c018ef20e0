import type { AgEvent, EventBus } from "../events/bus.ts";
import type { Session } from "../sessions/index.ts";
import type { FleetStore } from "./store.ts";

/**
 * Publishes this host's truth into the fleet database as it happens: every event of the bus, and
 * the summary of every session an event touches. What cannot be written (the database is away)
 * waits here and goes out when it is back; a full republication then puts every session right.
 */

/** Events kept for publication while the database is away; past it the oldest are dropped. */
export const MAX_PENDING_EVENTS = 10_000;

export interface LocalSessions {
  /** Every session of this host. */
  all(): Session[];
  /** The session, or null once it is gone (pruned). */
  find(id: string): Session | null;
}

export interface Publisher {
  /** Writes what waits; throws when the database does not take it (it waits on). */
  flush(): Promise<void>;
  /** Every session of this host written again, and the rows of sessions it no longer has removed. */
  republish(): Promise<void>;
  /**
   * The sessions that changed without an event (token counts, activity) written, and those gone
   * (pruned) removed: what a renewal of the lease does too.
   */
  sync(): Promise<void>;
  /** Events waiting and dropped while the database was away. */
  backlog(): { pending: number; dropped: number };
  stop(): void;
}

export function createPublisher(deps: {
  store: Pick<FleetStore, "insertEvents" | "upsertSessions" | "pruneSessions">;
  host: string;
  bus: Pick<EventBus, "subscribe">;
  sessions: LocalSessions;
  /** A write failed: the fleet says it is disconnected (and retries). */
  failed(error: unknown): void;
}): Publisher {
  let events: AgEvent[] = [];
  let dropped = 0;
  const dirty = new Set<string>();
  /** Each session as last written (its JSON): a sync writes only what changed since. */
  const written = new Map<string, string>();
  let running: Promise<void> | null = null;
  let again = false;

  const unsubscribe = deps.bus.subscribe((event) => {
    events.push(event);
    if (events.length > MAX_PENDING_EVENTS) {
      events.shift();
      dropped++;
    }
    if (event.session) dirty.add(event.session.id);
    void flush().catch(deps.failed);
  });

  async function write(): Promise<void> {
    const batch = events;
    events = [];
    try {
      await deps.store.insertEvents(
        deps.host,
        batch.map(({ id, ...data }) => ({
          id,
          sessionId: data.session?.id ?? null,
          data: JSON.stringify(data),
        })),
      );
    } catch (error) {
      events = [...batch, ...events].slice(-MAX_PENDING_EVENTS);
      throw error;
    }
    const ids = [...dirty];
    dirty.clear();
    try {
      await writeSessions(ids);
    } catch (error) {
      for (const id of ids) dirty.add(id);
      throw error;
    }
  }

  async function writeSessions(ids: readonly string[]): Promise<void> {
    const found = ids.flatMap((id) => {
      const session = deps.sessions.find(id);
      return session ? [row(session)] : [];
    });
    await upsert(found);
  }

  async function upsert(rows: ReturnType<typeof row>[]): Promise<void> {
    await deps.store.upsertSessions(deps.host, rows);
    for (const r of rows) written.set(r.id, r.data);
  }

  /** `all`: every session written, and every row of this host's that is not one of them removed. */
  async function sync(all: boolean): Promise<void> {
    const sessions = deps.sessions.all().map(row);
    await upsert(all ? sessions : sessions.filter((r) => written.get(r.id) !== r.data));
    const have = new Set(sessions.map((r) => r.id));
    const gone = [...written.keys()].filter((id) => !have.has(id));
    if (!all && gone.length === 0) return;
    await deps.store.pruneSessions(deps.host, [...have]);
    for (const id of gone) written.delete(id);
  }

  /** One write at a time; events arriving meanwhile go out in the next. */
  function flush(): Promise<void> {
    if (running) {
      again = true;
      return running;
    }
    running = (async () => {
      try {
        do {
          again = false;
          await write();
        } while (again || events.length > 0);
      } finally {
        running = null;
      }
    })();
    return running;
  }

  return {
    flush,
    async republish() {
      await sync(true);
      await flush();
    },
    sync: () => sync(false),
    backlog: () => ({ pending: events.length, dropped }),
    stop: unsubscribe,
  };
}

function row(session: Session) {
  return { id: session.id, tenantId: session.tenantId, data: JSON.stringify(session) };
}
