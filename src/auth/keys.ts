import type { Database } from "bun:sqlite";
import { createHash, randomBytes, randomUUID } from "node:crypto";
import type { Clock } from "../shared/clock.ts";
import { AgError } from "../shared/errors.ts";
import type { ApiKey, KeyCreateInput } from "./key.ts";
import type { Scope } from "./scopes.ts";

/** Every key starts so: a scanner (or a person) recognises one in a leaked log. */
const KEY_PREFIX = "agk_";
/** Shown in listings: the prefix and 6 characters of the 256-bit secret. */
const SHOWN_CHARS = KEY_PREFIX.length + 6;
/** lastUsedAt is written at most this often per key: reads must not each cost a write. */
const LAST_USED_EVERY_MS = 60_000;
/** Keys kept in memory after use. */
const MAX_RECENT = 1_000;

/** What a key is made from: a client's request, or (ag's own) a session's key bound to it. */
export type NewKey = KeyCreateInput & { sessionId?: string };

export interface KeyStore {
  create(input: NewKey): { key: ApiKey; secret: string };
  list(): ApiKey[];
  delete(id: string): void;
  /** The key a presented secret belongs to, if it exists and has not expired. */
  authenticate(secret: string): ApiKey | null;
  /** The key by id while it is still valid (an SSE token dies with its key). */
  active(id: string): ApiKey | null;
  /** The keys not bound to a session, each with the hash of its secret (a fleet publishes them). */
  digests(): Array<{ key: ApiKey; hash: string }>;
}

interface Row {
  id: string;
  name: string;
  prefix: string;
  scopes: string;
  tenant_id: string | null;
  session_id: string | null;
  created_at: string;
  expires_at: string | null;
  last_used_at: string | null;
}

/**
 * API keys, stored as the SHA-256 of the secret. The secrets are 256 random bits, so a fast hash
 * is enough (nothing to brute-force), and lookup by hash needs no comparison of secrets at all.
 */
export function createKeyStore(deps: { db: Database; clock: Pick<Clock, "now"> }): KeyStore {
  const { db, clock } = deps;
  const iso = (ms: number) => new Date(ms).toISOString();
  const columns = "id, name, prefix, scopes, tenant_id, session_id, created_at, expires_at, last_used_at";
  const byHash = db.query<Row, [string]>(`SELECT ${columns} FROM api_keys WHERE hash = ?`);
  const byId = db.query<Row, [string]>(`SELECT ${columns} FROM api_keys WHERE id = ?`);
  const touched = db.query(`UPDATE api_keys SET last_used_at = ? WHERE id = ?`);

  /**
   * Keys seen lately, by hash: a request then costs a hash, not a query. The store is the only
   * writer, so a delete evicts at once; expiry is checked on every use.
   */
  const recent = new Map<string, ApiKey>();
  const live = (row: Row | null): ApiKey | null => {
    if (!row) return null;
    if (row.expires_at !== null && Date.parse(row.expires_at) <= clock.now()) return null;
    return toKey(row);
  };

  return {
    create(input) {
      const now = clock.now();
      const expiresAt = input.expiresAt === undefined ? null : instant(input.expiresAt);
      if (expiresAt !== null && expiresAt <= now) {
        throw new AgError("VALIDATION_ERROR", "invalid body.expiresAt: must be in the future");
      }
      const secret = KEY_PREFIX + randomBytes(32).toString("base64url");
      const row: Row = {
        id: randomUUID(),
        name: input.name,
        prefix: secret.slice(0, SHOWN_CHARS),
        scopes: JSON.stringify(input.scopes),
        tenant_id: input.tenantId ?? null,
        session_id: input.sessionId ?? null,
        created_at: iso(now),
        expires_at: expiresAt === null ? null : iso(expiresAt),
        last_used_at: null,
      };
      db.query(
        `INSERT INTO api_keys (${columns}, hash)
         VALUES ($id, $name, $prefix, $scopes, $tenant_id, $session_id, $created_at, $expires_at, $last_used_at, $hash)`,
      ).run({ ...dollar(row), $hash: digest(secret) });
      return { key: toKey(row), secret };
    },
    list: () => db.query<Row, []>(`SELECT ${columns} FROM api_keys ORDER BY created_at, id`).all().map(toKey),
    delete(id) {
      if (db.query("DELETE FROM api_keys WHERE id = ?").run(id).changes === 0) {
        throw new AgError("KEY_NOT_FOUND", `no API key ${id}`);
      }
      for (const [hash, key] of recent) if (key.id === id) recent.delete(hash);
    },
    authenticate(secret) {
      if (!secret.startsWith(KEY_PREFIX)) return null;
      const hash = digest(secret);
      const now = clock.now();
      let key = recent.get(hash) ?? live(byHash.get(hash));
      if (key?.expiresAt != null && Date.parse(key.expiresAt) <= now) key = null;
      if (!key) {
        recent.delete(hash);
        return null;
      }
      if (key.lastUsedAt === null || now - Date.parse(key.lastUsedAt) >= LAST_USED_EVERY_MS) {
        key = { ...key, lastUsedAt: iso(now) };
        touched.run(key.lastUsedAt, key.id);
      }
      recent.set(hash, key);
      if (recent.size > MAX_RECENT) recent.delete(recent.keys().next().value!);
      return key;
    },
    active: (id) => live(byId.get(id)),
    digests: () =>
      db
        .query<Row & { hash: string }, []>(`SELECT ${columns}, hash FROM api_keys WHERE session_id IS NULL`)
        .all()
        .map((row) => ({ key: toKey(row), hash: row.hash })),
  };
}

/** RFC 3339 with its offset: `2030-01-31T12:00:00Z`, `…T17:30:00.5+05:30` (t, z or a space allowed). */
const RFC3339 = /^(\d{4}-\d\d-\d\d)[T ](\d\d:\d\d:\d\d)(\.\d+)?(Z|[+-]\d\d:\d\d)$/i;

/**
 * When a key expires, in ms. The schema's date-time format lets through what Date.parse then
 * bends: 30 February becomes 2 March, 24:00 the next day, `12/01/2030` a server-local time with
 * day and month guessed. A key must die exactly when its creator said: only an RFC 3339 instant
 * whose date and time read back unchanged is taken.
 */
function instant(text: string): number {
  const [, date, time, fraction = "", zone = ""] = RFC3339.exec(text) ?? [];
  const fields = Date.parse(`${date}T${time}Z`);
  const exact = !Number.isNaN(fields) && new Date(fields).toISOString().startsWith(`${date}T${time}`);
  const at = Date.parse(`${date}T${time}${fraction}${zone.toUpperCase()}`);
  if (date === undefined || !exact || Number.isNaN(at)) {
    throw new AgError(
      "VALIDATION_ERROR",
      "invalid body.expiresAt: expected an RFC 3339 date-time with its offset, e.g. 2030-01-31T12:00:00Z",
    );
  }
  return at;
}

/** How a key's secret is stored (a fleet publishes it so, src/fleet/keys.ts). */
export { digest as keyDigest };

function digest(secret: string): string {
  return createHash("sha256").update(secret).digest("hex");
}

function toKey(row: Row): ApiKey {
  return {
    id: row.id,
    name: row.name,
    prefix: row.prefix,
    scopes: JSON.parse(row.scopes) as Scope[],
    tenantId: row.tenant_id,
    sessionId: row.session_id,
    createdAt: row.created_at,
    expiresAt: row.expires_at,
    lastUsedAt: row.last_used_at,
  };
}

function dollar(row: Row): Record<string, string | null> {
  return Object.fromEntries(Object.entries(row).map(([k, v]) => [`$${k}`, v]));
}
