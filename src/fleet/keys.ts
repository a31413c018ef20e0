import type { ApiKey } from "../auth/key.ts";
import { keyDigest as digest, type KeyStore } from "../auth/keys.ts";
import type { FleetStore, KeyRow } from "./store.ts";

/**
 * API keys that work on every host: a key made on a fleet member is published (the SHA-256 of
 * its secret and what it grants, never the secret), and every host accepts the others' keys from
 * its in-memory copy of them. Each key stays its host's: revoked there, and gone everywhere.
 */

export interface FleetKeys {
  /** The host's own key store, its keys published; another host's key accepted. */
  wrap(inner: KeyStore): KeyStore;
  /** Everything read again, and what this host made or revoked while away written. */
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
  /** Keys this host made (kept to publish again after an outage) and revoked. */
  const made = new Map<string, KeyRow>();
  const revoked = new Set<string>();
  let inner: KeyStore | null = null;

  const live = (key: ApiKey | undefined): ApiKey | null =>
    key && (key.expiresAt === null || Date.parse(key.expiresAt) > now()) ? key : null;

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

  async function publish(): Promise<void> {
    for (const [id, row] of made) {
      if (inner?.active(id)) await deps.store.upsertKey(row);
      else {
        made.delete(id);
        revoked.add(id);
      }
    }
    for (const id of revoked) {
      await deps.store.deleteKey(id);
      revoked.delete(id);
    }
  }

  return {
    wrap(store) {
      inner = store;
      return {
        ...store,
        create(input) {
          const created = store.create(input);
          // A session's own key stays with its session's host.
          if (created.key.sessionId === null) {
            const row = { id: created.key.id, host: deps.host, hash: digest(created.secret), data: "" };
            row.data = JSON.stringify(created.key);
            made.set(row.id, row);
            void deps.store.upsertKey(row).catch(deps.failed);
          }
          return created;
        },
        delete(id) {
          store.delete(id);
          if (made.delete(id)) {
            revoked.add(id);
            void publish().catch(deps.failed);
          }
        },
        authenticate: (secret) => store.authenticate(secret) ?? live(byHash.get(digest(secret))),
        active: (id) => store.active(id) ?? live(byHash.get(byId.get(id) ?? "")),
      };
    },
    async reload() {
      await publish();
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
