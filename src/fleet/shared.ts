import type { TenantWorkdirs } from "../auth/tenants.ts";
import type { MemoryEntry } from "../memory/entry.ts";
import type { MemoryRepo } from "../memory/repo.ts";
import { AgError, describeError } from "../shared/errors.ts";
import type { Logger } from "../shared/log.ts";
import type { createSharedStore, MemoryRow } from "./shared-store.ts";

/**
 * Templates, memory and tenants in the fleet database (docs/fleet.md): the implementations of
 * the domains' stores a fleet member uses in place of its SQLite tables. Each keeps the rows in
 * memory, filled at every join and kept current by the fleet's notifications, so a read stays
 * synchronous as the domains ask; a write changes the copy at once and goes to PostgreSQL in the
 * order it was made. A host whose writes cannot reach the database says so (the fleet retries
 * and, once back, reads everything again: what the database holds wins).
 */

export type SharedStore = ReturnType<typeof createSharedStore>;

/** What a template store holds, as far as the fleet cares: an id and a unique name. */
export interface Named {
  id: string;
  name: string;
}

/** The templates domain's repository, over any stored template shape. */
export interface SharedTemplates<T extends Named> {
  insert(template: T): void;
  get(id: string): T | null;
  list(): T[];
  update(template: T): void;
  delete(id: string): boolean;
}

export interface FleetShared<T extends Named = Named> {
  /** The templates domain's repository (the template's own shape is its domain's: T). */
  templates: SharedTemplates<T>;
  memory: MemoryRepo;
  /** This host's configured tenants first, then those only other hosts define. */
  tenantWorkdirs: TenantWorkdirs;
  /** Connects the copies to the fleet's database (createFleet does, once). */
  bind(deps: { store: SharedStore; host: string; failed(error: unknown): void }): void;
  /** Publishes this host's tenants and reads every row again. */
  reload(): Promise<void>;
  /** A notification of the fleet's channel: false when it is none of these tables'. */
  notified(payload: string): Promise<boolean>;
}

/** PostgreSQL's unique_violation: another host took the name first. */
const UNIQUE_VIOLATION = "23505";

export function createFleetShared<T extends Named>(deps: {
  tenants: TenantWorkdirs;
  logger: Logger;
}): FleetShared<T> {
  const own = deps.tenants;
  let bound: { store: SharedStore; host: string; failed(error: unknown): void } | null = null;
  const templates = new Map<string, T>();
  const memory = new Map<string, MemoryRow>();
  const tenantWorkdirs: TenantWorkdirs = { ...own };

  /**
   * Writes not yet in the database, oldest first: sent one after another in the order they were
   * made; one that fails stays, with all after it, for the next attempt (a later write, a join).
   * `about` is the notification a write causes: until it is sent, this host's copy is newer than
   * what the database would answer, so such a notification is not read back.
   */
  const outbox: Array<{
    about: string;
    run(store: SharedStore): Promise<void>;
    refused?(error: unknown): boolean;
  }> = [];
  let flushing: Promise<void> | null = null;

  function flush(): Promise<void> {
    const target = bound;
    if (!target || outbox.length === 0) return flushing ?? Promise.resolve();
    flushing ??= send(target.store).then(
      () => {
        flushing = null;
        // A write made as the last one was answered: its turn now.
        if (outbox.length > 0) void flush().catch(target.failed);
      },
      (error) => {
        flushing = null;
        throw error;
      },
    );
    return flushing;
  }

  async function send(store: SharedStore): Promise<void> {
    // Past the first await: `flushing` is set before this can end.
    await Promise.resolve();
    while (outbox.length > 0) {
      const next = outbox[0]!;
      try {
        await next.run(store);
      } catch (error) {
        if (!next.refused?.(error)) throw error;
      }
      outbox.shift();
    }
  }

  function write(entry: (typeof outbox)[number]): void {
    if (!bound) return;
    outbox.push(entry);
    void flush().catch(bound.failed);
  }

  function named(name: string, id: string): void {
    for (const t of templates.values())
      if (t.name === name && t.id !== id)
        throw new AgError("CONFLICT", `a template named "${name}" already exists`);
  }

  /**
   * Another host wrote the same name first: this host's write goes, and its copy becomes what the
   * database holds (nothing for a new template, the version before for a renamed one).
   */
  function lostName(template: Named) {
    return (error: unknown) => {
      const { errno, code } = error as { errno?: string; code?: string };
      if (errno !== UNIQUE_VIOLATION && code !== UNIQUE_VIOLATION) return false;
      templates.delete(template.id);
      if (bound) void readTemplate(bound.store, template.id).catch(bound.failed);
      deps.logger.warn(
        `fleet: template "${template.name}" (${template.id}) was dropped: another host made one of that name first (${describeError(error)})`,
      );
      return true;
    };
  }

  async function readTemplate(store: SharedStore, id: string): Promise<void> {
    const row = await store.template(id);
    if (row) templates.set(id, JSON.parse(row.data));
    else templates.delete(id);
  }

  const putTemplate = (template: T) => {
    named(template.name, template.id);
    templates.set(template.id, template);
    write({
      about: `t:${template.id}`,
      run: (s) => s.upsertTemplate({ id: template.id, name: template.name, data: JSON.stringify(template) }),
      refused: lostName(template),
    });
  };

  const live = (row: MemoryRow | undefined, now: number): row is MemoryRow =>
    row !== undefined && (row.expiresAt === null || row.expiresAt > now);
  const entryOf = (row: MemoryRow): MemoryEntry => ({
    key: row.key,
    value: row.value,
    createdAt: row.createdAt,
    updatedAt: row.updatedAt,
    expiresAt: row.expiresAt === null ? null : new Date(row.expiresAt).toISOString(),
  });

  const memoryRepo: MemoryRepo = {
    get(key, now) {
      const row = memory.get(key);
      return live(row, now) ? entryOf(row) : null;
    },
    list(prefix, now) {
      return [...memory.values()]
        .filter((row) => row.key.startsWith(prefix) && live(row, now))
        .sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0))
        .map(entryOf);
    },
    put(entry, now) {
      const before = memory.get(entry.key);
      const existed = live(before, now);
      const row: MemoryRow = {
        key: entry.key,
        value: entry.value,
        // An expired entry being replaced is a new entry.
        createdAt: existed ? before.createdAt : entry.at,
        updatedAt: entry.at,
        expiresAt: entry.expiresAt,
      };
      memory.set(entry.key, row);
      write({ about: `m:${row.key}`, run: (s) => s.upsertMemory(row) });
      return !existed;
    },
    delete(key, now) {
      if (!live(memory.get(key), now)) return false;
      memory.delete(key);
      write({ about: `m:${key}`, run: (s) => s.deleteMemory(key) });
      return true;
    },
    reap(now) {
      let removed = 0;
      for (const [key, row] of memory)
        if (!live(row, now)) {
          memory.delete(key);
          removed++;
        }
      if (removed > 0) write({ about: "", run: (s) => s.reapMemory(now) });
      return removed;
    },
  };

  async function readTenants(store: SharedStore): Promise<void> {
    const others: TenantWorkdirs = {};
    for (const row of await store.tenants())
      if (!(row.tenant in own) && !(row.tenant in others)) others[row.tenant] = JSON.parse(row.data);
    for (const tenant of Object.keys(tenantWorkdirs)) if (!(tenant in own)) delete tenantWorkdirs[tenant];
    Object.assign(tenantWorkdirs, others);
  }

  return {
    templates: {
      insert: putTemplate,
      update: putTemplate,
      get: (id) => templates.get(id) ?? null,
      list: () => [...templates.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)),
      delete(id) {
        if (!templates.delete(id)) return false;
        write({ about: `t:${id}`, run: (s) => s.deleteTemplate(id) });
        return true;
      },
    },
    memory: memoryRepo,
    tenantWorkdirs,
    bind(target) {
      bound = target;
    },
    async reload() {
      if (!bound) return;
      const { store, host } = bound;
      // What this host wrote while the database was away goes first: then the database is the truth.
      await flush();
      // A tenant's rule is where its folders are: the OS user it runs as stays this host's own.
      await store.publishTenants(
        host,
        Object.entries(own).map(([tenant, { root, allowedPaths }]) => ({
          host,
          tenant,
          data: JSON.stringify({ root, ...(allowedPaths ? { allowedPaths } : {}) }),
        })),
      );
      const [rows, entries] = await Promise.all([store.templates(), store.memories()]);
      templates.clear();
      for (const row of rows) templates.set(row.id, JSON.parse(row.data));
      memory.clear();
      for (const row of entries) memory.set(row.key, row);
      await readTenants(store);
    },
    async notified(payload) {
      if (!bound) return false;
      const { store } = bound;
      const [kind, id] = [payload.slice(0, 2), payload.slice(2)];
      if (outbox.some((w) => w.about === payload)) return kind === "t:" || kind === "m:";
      if (kind === "t:") await readTemplate(store, id);
      else if (kind === "m:") {
        const row = await store.memory(id);
        if (row) memory.set(id, row);
        else memory.delete(id);
      } else if (kind === "n:") await readTenants(store);
      else return false;
      return true;
    },
  };
}
