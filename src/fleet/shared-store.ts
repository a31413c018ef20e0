import type { SQL } from "bun";

/**
 * The tables a fleet shares beyond sessions (docs/fleet.md, "Templates, memory and tenants"):
 * rows in, rows out, each write notified on the fleet's channel. `t:<id>` a template, `m:<key>` a
 * memory entry, `n:<host>` the tenants a host's configuration defines.
 */

/** One migration step (store.ts lists it after the others). */
export const SHARED_TABLES = `
  CREATE TABLE fleet_templates (
    id text PRIMARY KEY,
    name text NOT NULL UNIQUE,
    data text NOT NULL
  );
  CREATE TABLE fleet_memory (
    key text PRIMARY KEY,
    value text NOT NULL,
    created_at text NOT NULL,
    updated_at text NOT NULL,
    expires_at bigint
  );
  CREATE TABLE fleet_tenants (
    host text NOT NULL,
    tenant text NOT NULL,
    data text NOT NULL,
    PRIMARY KEY (host, tenant)
  );`;

export interface TemplateRow {
  id: string;
  name: string;
  /** The template as its domain stores it, JSON. */
  data: string;
}

export interface MemoryRow {
  key: string;
  value: string;
  createdAt: string;
  updatedAt: string;
  /** Epoch milliseconds, as the memory domain keeps it; null: never. */
  expiresAt: number | null;
}

export interface TenantRow {
  host: string;
  tenant: string;
  /** `{root, allowedPaths}`, JSON. */
  data: string;
}

const toMemory = (r: Record<string, unknown>): MemoryRow => ({
  key: r.key as string,
  value: r.value as string,
  createdAt: r.created_at as string,
  updatedAt: r.updated_at as string,
  expiresAt: r.expires_at === null ? null : Number(r.expires_at),
});

export function createSharedStore(sql: SQL, channel: string) {
  return {
    async templates(): Promise<TemplateRow[]> {
      return [...(await sql`SELECT id, name, data FROM fleet_templates`)];
    },
    async template(id: string): Promise<TemplateRow | null> {
      const [row] = await sql`SELECT id, name, data FROM fleet_templates WHERE id = ${id}`;
      return row ?? null;
    },
    /** A name another template holds is refused by the database (unique_violation, 23505). */
    async upsertTemplate(row: TemplateRow): Promise<void> {
      await sql`
        INSERT INTO fleet_templates (id, name, data) VALUES (${row.id}, ${row.name}, ${row.data})
        ON CONFLICT (id) DO UPDATE SET name = excluded.name, data = excluded.data`;
      await sql.notify(channel, `t:${row.id}`);
    },
    async deleteTemplate(id: string): Promise<void> {
      await sql`DELETE FROM fleet_templates WHERE id = ${id}`;
      await sql.notify(channel, `t:${id}`);
    },

    async memories(): Promise<MemoryRow[]> {
      return (await sql`SELECT * FROM fleet_memory`).map(toMemory);
    },
    async memory(key: string): Promise<MemoryRow | null> {
      const [row] = await sql`SELECT * FROM fleet_memory WHERE key = ${key}`;
      return row ? toMemory(row) : null;
    },
    async upsertMemory(row: MemoryRow): Promise<void> {
      await sql`
        INSERT INTO fleet_memory (key, value, created_at, updated_at, expires_at)
        VALUES (${row.key}, ${row.value}, ${row.createdAt}, ${row.updatedAt}, ${row.expiresAt})
        ON CONFLICT (key) DO UPDATE SET value = excluded.value, created_at = excluded.created_at,
          updated_at = excluded.updated_at, expires_at = excluded.expires_at`;
      await sql.notify(channel, `m:${row.key}`);
    },
    async deleteMemory(key: string): Promise<void> {
      await sql`DELETE FROM fleet_memory WHERE key = ${key}`;
      await sql.notify(channel, `m:${key}`);
    },
    /** Removes the entries expired at `now` (any host's reaper may: a second one finds none). */
    async reapMemory(now: number): Promise<void> {
      const gone = await sql`DELETE FROM fleet_memory WHERE expires_at <= ${now} RETURNING key`;
      for (const { key } of gone) await sql.notify(channel, `m:${key}`);
    },

    async tenants(): Promise<TenantRow[]> {
      return [...(await sql`SELECT host, tenant, data FROM fleet_tenants ORDER BY host, tenant`)];
    },
    /** This host's tenants, as its configuration defines them now (those it no longer has removed). */
    async publishTenants(host: string, rows: readonly TenantRow[]): Promise<void> {
      await sql.begin(async (tx) => {
        await tx`DELETE FROM fleet_tenants WHERE host = ${host}`;
        for (const r of rows)
          await tx`INSERT INTO fleet_tenants (host, tenant, data) VALUES (${host}, ${r.tenant}, ${r.data})`;
        await tx.notify(channel, `n:${host}`);
      });
    },
  };
}
