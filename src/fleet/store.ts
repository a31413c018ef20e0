import { SQL } from "bun";
import { createSharedStore, SHARED_TABLES } from "./shared-store.ts";

/**
 * The fleet's tables in PostgreSQL and every statement on them (Bun's built-in SQL client). No
 * business rules here: rows in, rows out. Times that decide anything (leases) are the database's
 * own `now()`, so the hosts' clocks never have to agree.
 */

/**
 * The one NOTIFY channel: `s:<id>` a session changed, `d:<id>` one went, `e:<seq>` an event,
 * `h:<name>` a host, `k:<id>` an API key was made or revoked; shared-store.ts adds its own.
 */
export const CHANNEL = "ag_fleet";

/** Append-only, like the SQLite migrations: a new step is a new entry, never an edit. */
const MIGRATIONS: readonly string[] = [
  `CREATE TABLE fleet_hosts (
     name text PRIMARY KEY,
     url text NOT NULL,
     secret text NOT NULL,
     started_at timestamptz NOT NULL,
     heartbeat_at timestamptz NOT NULL,
     lease_until timestamptz NOT NULL,
     available_mb integer,
     reserve_mb integer NOT NULL DEFAULT 0,
     running integer NOT NULL DEFAULT 0
   );
   CREATE TABLE fleet_sessions (
     id text PRIMARY KEY,
     host text NOT NULL,
     tenant_id text,
     updated_at timestamptz NOT NULL DEFAULT now(),
     data text NOT NULL
   );
   CREATE INDEX fleet_sessions_host ON fleet_sessions (host);
   CREATE TABLE fleet_events (
     seq bigserial PRIMARY KEY,
     host text NOT NULL,
     event_id bigint NOT NULL,
     session_id text,
     data text NOT NULL,
     UNIQUE (host, event_id)
   );`,
  `CREATE TABLE fleet_keys (
     id text PRIMARY KEY,
     host text NOT NULL,
     hash text NOT NULL UNIQUE,
     data text NOT NULL
   );`,
  SHARED_TABLES,
];

/** Serialises migrations between hosts that start together, and event numbering (see insertEvents). */
const MIGRATION_LOCK = 7_305_001;
const EVENT_LOCK = 7_305_002;

export interface HostRow {
  name: string;
  url: string;
  secret: string;
  startedAt: string;
  heartbeatAt: string;
  leaseUntil: string;
  online: boolean;
  availableMb: number | null;
  reserveMb: number;
  running: number;
}

export interface SessionRow {
  id: string;
  host: string;
  data: string;
}

export interface EventRow {
  seq: number;
  host: string;
  data: string;
}

export interface KeyRow {
  id: string;
  host: string;
  /** SHA-256 of the secret, hex: the secret itself is never stored. */
  hash: string;
  data: string;
}

export interface HostFigures {
  availableMb: number | null;
  reserveMb: number;
  running: number;
}

export type FleetStore = ReturnType<typeof createFleetStore>;

export function createFleetStore(url: string, options: { connectionTimeoutS?: number } = {}) {
  const sql = new SQL({
    url,
    max: 4,
    idleTimeout: 30,
    connectionTimeout: options.connectionTimeoutS ?? 5,
  });

  return {
    sql,
    ...createSharedStore(sql, CHANNEL),
    async migrate(): Promise<void> {
      await sql.begin(async (tx) => {
        await tx`SELECT pg_advisory_xact_lock(${MIGRATION_LOCK})`;
        await tx.unsafe("CREATE TABLE IF NOT EXISTS fleet_migrations (version integer PRIMARY KEY)");
        const [row] = await tx`SELECT coalesce(max(version), 0)::int AS version FROM fleet_migrations`;
        for (let version = row.version + 1; version <= MIGRATIONS.length; version++) {
          await tx.unsafe(MIGRATIONS[version - 1]!);
          await tx`INSERT INTO fleet_migrations (version) VALUES (${version})`;
        }
      });
    },

    /** This host's row with a fresh lease; a restart replaces the row whole (its URL, secret). */
    async register(
      host: { name: string; url: string; secret: string; leaseMs: number },
      figures: HostFigures,
    ): Promise<void> {
      const lease = `${host.leaseMs} milliseconds`;
      await sql`
        INSERT INTO fleet_hosts (name, url, secret, started_at, heartbeat_at, lease_until,
          available_mb, reserve_mb, running)
        VALUES (${host.name}, ${host.url}, ${host.secret}, now(), now(), now() + ${lease}::interval,
          ${figures.availableMb}, ${figures.reserveMb}, ${figures.running})
        ON CONFLICT (name) DO UPDATE SET url = excluded.url, secret = excluded.secret,
          started_at = excluded.started_at, heartbeat_at = excluded.heartbeat_at,
          lease_until = excluded.lease_until, available_mb = excluded.available_mb,
          reserve_mb = excluded.reserve_mb, running = excluded.running`;
      await sql.notify(CHANNEL, `h:${host.name}`);
    },

    /** Renews the lease and publishes the admission figures; false when the row is gone. */
    async heartbeat(name: string, leaseMs: number, figures: HostFigures): Promise<boolean> {
      const lease = `${leaseMs} milliseconds`;
      const rows = await sql`
        UPDATE fleet_hosts SET heartbeat_at = now(), lease_until = now() + ${lease}::interval,
          available_mb = ${figures.availableMb}, reserve_mb = ${figures.reserveMb}, running = ${figures.running}
        WHERE name = ${name} RETURNING name`;
      return rows.length > 0;
    },

    /** Ends this host's lease at once (a clean stop): it is offline everywhere now. */
    async release(name: string): Promise<void> {
      await sql`UPDATE fleet_hosts SET lease_until = now() WHERE name = ${name}`;
      await sql.notify(CHANNEL, `h:${name}`);
    },

    async hosts(): Promise<HostRow[]> {
      const rows = await sql`
        SELECT name, url, secret, started_at, heartbeat_at, lease_until, lease_until > now() AS online,
          available_mb, reserve_mb, running
        FROM fleet_hosts ORDER BY name`;
      return rows.map(
        (r: Record<string, unknown>): HostRow => ({
          name: r.name as string,
          url: r.url as string,
          secret: r.secret as string,
          startedAt: (r.started_at as Date).toISOString(),
          heartbeatAt: (r.heartbeat_at as Date).toISOString(),
          leaseUntil: (r.lease_until as Date).toISOString(),
          online: r.online as boolean,
          availableMb: (r.available_mb as number | null) ?? null,
          reserveMb: r.reserve_mb as number,
          running: r.running as number,
        }),
      );
    },

    /** Writes this host's sessions as they are now, and notifies each. */
    async upsertSessions(
      host: string,
      sessions: ReadonlyArray<{ id: string; tenantId: string | null; data: string }>,
    ): Promise<void> {
      if (sessions.length === 0) return;
      await sql.begin(async (tx) => {
        for (const s of sessions) {
          await tx`
            INSERT INTO fleet_sessions (id, host, tenant_id, updated_at, data)
            VALUES (${s.id}, ${host}, ${s.tenantId}, now(), ${s.data})
            ON CONFLICT (id) DO UPDATE SET host = excluded.host, tenant_id = excluded.tenant_id,
              updated_at = now(), data = excluded.data`;
          await tx.notify(CHANNEL, `s:${s.id}`);
        }
      });
    },

    /** Removes this host's rows of sessions it no longer has (pruned), but keeps `keep`. */
    async pruneSessions(host: string, keep: readonly string[]): Promise<string[]> {
      const rows = await sql`
        DELETE FROM fleet_sessions WHERE host = ${host} AND NOT (id = ANY(${sql.array([...keep], "TEXT")}))
        RETURNING id`;
      const gone = rows.map((r: { id: string }) => r.id);
      for (const id of gone) await sql.notify(CHANNEL, `d:${id}`);
      return gone;
    },

    async session(id: string): Promise<SessionRow | null> {
      const [row] = await sql`SELECT id, host, data FROM fleet_sessions WHERE id = ${id}`;
      return row ?? null;
    },

    async sessions(): Promise<SessionRow[]> {
      return [...(await sql`SELECT id, host, data FROM fleet_sessions`)];
    },

    /**
     * Appends events in one transaction that holds the numbering lock: sequence numbers commit in
     * order, so a reader that fetches "after seq N" never skips one that commits late. A host's
     * own event id makes a second publication of the same event (a retry after an outage) a no-op.
     */
    async insertEvents(
      host: string,
      events: ReadonlyArray<{ id: number; sessionId: string | null; data: string }>,
    ): Promise<void> {
      if (events.length === 0) return;
      await sql.begin(async (tx) => {
        await tx`SELECT pg_advisory_xact_lock(${EVENT_LOCK})`;
        let last = 0;
        for (const e of events) {
          const rows = await tx`
            INSERT INTO fleet_events (host, event_id, session_id, data)
            VALUES (${host}, ${e.id}, ${e.sessionId}, ${e.data})
            ON CONFLICT (host, event_id) DO NOTHING RETURNING seq`;
          if (rows.length) last = Number(rows[0].seq);
        }
        if (last) await tx.notify(CHANNEL, `e:${last}`);
      });
    },

    /** Events after `seq`, oldest first, at most `limit`. */
    async eventsAfter(seq: number, limit: number): Promise<EventRow[]> {
      const rows = await sql`
        SELECT seq, host, data FROM fleet_events WHERE seq > ${seq} ORDER BY seq LIMIT ${limit}`;
      return rows.map((r: { seq: string | number; host: string; data: string }) => ({
        seq: Number(r.seq),
        host: r.host,
        data: r.data,
      }));
    },

    /** The newest `limit` events, oldest first (the replay ring at start). */
    async latestEvents(limit: number): Promise<EventRow[]> {
      const rows = await sql`
        SELECT seq, host, data FROM (SELECT seq, host, data FROM fleet_events ORDER BY seq DESC LIMIT ${limit}) t
        ORDER BY seq`;
      return rows.map((r: { seq: string | number; host: string; data: string }) => ({
        seq: Number(r.seq),
        host: r.host,
        data: r.data,
      }));
    },

    /** An API key made on `host`, by the hash of its secret, so it works on every host. */
    async upsertKey(key: KeyRow): Promise<void> {
      await sql`
        INSERT INTO fleet_keys (id, host, hash, data) VALUES (${key.id}, ${key.host}, ${key.hash}, ${key.data})
        ON CONFLICT (id) DO UPDATE SET data = excluded.data`;
      await sql.notify(CHANNEL, `k:${key.id}`);
    },

    async deleteKey(id: string): Promise<void> {
      await sql`DELETE FROM fleet_keys WHERE id = ${id}`;
      await sql.notify(CHANNEL, `k:${id}`);
    },

    async key(id: string): Promise<KeyRow | null> {
      const [row] = await sql`SELECT id, host, hash, data FROM fleet_keys WHERE id = ${id}`;
      return row ?? null;
    },

    async keys(): Promise<KeyRow[]> {
      return [...(await sql`SELECT id, host, hash, data FROM fleet_keys`)];
    },

    listen(onNotify: (payload: string) => void, onListen: () => void) {
      return sql.listen(CHANNEL, onNotify, onListen);
    },

    close(): Promise<void> {
      return sql.close({ timeout: 1 });
    },
  };
}
