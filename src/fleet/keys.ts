import type { ApiKey } from "../auth/key.ts";
import { keyDigest as digest, type KeyStore } from "../auth/keys.ts";
import type { FleetStore, KeyRow } from "./store.ts";

/**
 * API keys that work on every host: a host's keys (those not bound to a session) are published
 * (the SHA-256 of the secret and what it grants, never the secret), and every host accepts the
 * others' keys from its in-memory copy of them. At each (re)join a host publishes every key it
 * has, those made before it joined the fleet or while the database was away included, and removes
 * the rows of those it no longer has. Each key stays its host's: revoked there, and gone everywhere.
 */

export interface FleetKeys {
  /** The host's own key store, its keys published; another host's key accepted. */
  wrap(inner: KeyStore): KeyStore;
  /** This host's keys published again (and the revoked removed), everything else read again. */
  reload(): Promise<void>;
  /** A `k:<id>` notification. */
  notified(id: string): Promise<void>;
}

export function createFleetKeys(deps: {
  store: Pick<FleetStore, "keys" | "key" | "upsertKey" | "deleteKey">;
  host: string;
  /** A write failed: the fleet says it is disconnected (and retries). */
  failed(error: unknown): void;
  now?: () => number;
}): FleetKeys {
  const now = deps.now ?? Date.now;
  /** Other hosts' keys by the hash of their secret, and by id. */
  let byHash = new Map<string, ApiKey>();
  let byId = new Map<string, string>();
  let inner: KeyStore | null = null;

  const live = (key: ApiKey | undefined): ApiKey | null =>
    key && (key.expiresAt === null || Date.parse(key.expiresAt) > now()) ? key : null;
  const rowOf = (key: ApiKey, hash: string): KeyRow => ({
    id: key.id,
    host: deps.host,
    hash,
    data: JSON.stringify(key),
  });

  function hold(row: KeyRow): void {
    if (row.host === deps.host) return;
    byHash.set(row.hash, JSON.parse(row.data) as ApiKey);
    byId.set(row.id, row.hash);
  }

  function forget(id: string): void {
    const hash = byId.get(id);
    if (hash) byHash.delete(hash);
    byId.delete(id);
  }

  /** Every key this host has, written; the rows of those it no longer has, removed. */
  async function publish(rows: readonly KeyRow[]): Promise<void> {
    const own = inner?.digests() ?? [];
    for (const { key, hash } of own) await deps.store.upsertKey(rowOf(key, hash));
    const kept = new Set(own.map(({ key }) => key.id));
    for (const row of rows)
      if (row.host === deps.host && !kept.has(row.id)) await deps.store.deleteKey(row.id);
  }

  return {
    wrap(store) {
      inner = store;
      return {
        ...store,
        create(input) {
          const created = store.create(input);
          // A session's own key stays with its session's host (its session is there).
          if (created.key.sessionId === null)
            void deps.store.upsertKey(rowOf(created.key, digest(created.secret))).catch(deps.failed);
          return created;
        },
        delete(id) {
          store.delete(id);
          void deps.store.deleteKey(id).catch(deps.failed);
        },
        authenticate: (secret) => store.authenticate(secret) ?? live(byHash.get(digest(secret))),
        active: (id) => store.active(id) ?? live(byHash.get(byId.get(id) ?? "")),
      };
    },
    async reload() {
      await publish(await deps.store.keys());
      const rows = await deps.store.keys();
      byHash = new Map();
      byId = new Map();
      for (const row of rows) hold(row);
    },
    async notified(id) {
      const row = await deps.store.key(id);
      if (row) hold(row);
      else forget(id);
    },
  };
}
