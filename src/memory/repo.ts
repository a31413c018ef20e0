import type { Database } from "bun:sqlite";
import { fromColumns } from "../shared/rows.ts";
import type { MemoryEntry } from "./entry.ts";

interface MemoryRow {
  key: string;
  value: string;
  created_at: string;
  updated_at: string;
  expires_at: number | null;
}

export interface MemoryRepo {
  /** The entry, unless it has expired at `now` (an expired row is invisible before it is reaped). */
  get(key: string, now: number): MemoryEntry | null;
  /** Live entries whose key starts with `prefix` (all with ""), in key order. */
  list(prefix: string, now: number): MemoryEntry[];
  /** Inserts or replaces; `createdAt` survives a replace. Returns whether the key was new. */
  put(entry: { key: string; value: string; at: string; expiresAt: number | null }, now: number): boolean;
  delete(key: string, now: number): boolean;
  /** Removes expired rows; returns how many. */
  reap(now: number): number;
}

/** Escapes LIKE's wildcards so a prefix matches literally. */
function likePrefix(prefix: string): string {
  return `${prefix.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

export function createMemoryRepo(db: Database): MemoryRepo {
  const live = "(expires_at IS NULL OR expires_at > $now)";
  const getStmt = db.query<MemoryRow, { key: string; now: number }>(
    `SELECT * FROM memory WHERE key = $key AND ${live}`,
  );
  const listStmt = db.query<MemoryRow, { pattern: string; now: number }>(
    `SELECT * FROM memory WHERE key LIKE $pattern ESCAPE '\\' AND ${live} ORDER BY key`,
  );
  const upsert = db.query(
    `INSERT INTO memory (key, value, created_at, updated_at, expires_at)
     VALUES ($key, $value, $at, $at, $expiresAt)
     ON CONFLICT(key) DO UPDATE SET
       value = excluded.value,
       updated_at = excluded.updated_at,
       expires_at = excluded.expires_at,
       -- an expired row being replaced is a new entry
       created_at = CASE WHEN ${live.replaceAll("expires_at", "memory.expires_at")}
                         THEN memory.created_at ELSE excluded.created_at END`,
  );
  const deleteStmt = db.query(`DELETE FROM memory WHERE key = $key AND ${live}`);
  const reapStmt = db.query("DELETE FROM memory WHERE expires_at IS NOT NULL AND expires_at <= $now");

  return {
    get: (key, now) => {
      const row = getStmt.get({ key, now });
      return row ? toEntry(row) : null;
    },
    list: (prefix, now) => listStmt.all({ pattern: likePrefix(prefix), now }).map(toEntry),
    put(entry, now) {
      return db.transaction(() => {
        const existed = getStmt.get({ key: entry.key, now }) !== null;
        upsert.run({ key: entry.key, value: entry.value, at: entry.at, expiresAt: entry.expiresAt, now });
        return !existed;
      })();
    },
    delete: (key, now) => deleteStmt.run({ key, now }).changes > 0,
    reap: (now) => reapStmt.run({ now }).changes,
  };
}

function toEntry(row: MemoryRow): MemoryEntry {
  return {
    ...fromColumns(row, ["key", "value", "created_at", "updated_at"]),
    expiresAt: row.expires_at === null ? null : new Date(row.expires_at).toISOString(),
  };
}
