import type { Database } from "bun:sqlite";
import { AgError } from "../shared/errors.ts";
import type { SearchOrigin, SearchRole } from "./search.ts";
import { HIT_CLOSE, HIT_OPEN } from "./snippet.ts";

/** One conversation in the index: an ag session or an external conversation, and how far it is read. */
export interface SourceRow {
  id: string;
  origin: SearchOrigin;
  agent: string;
  host: string;
  workDir: string | null;
  tenantId: string | null;
  status: string | null;
  conversationId: string | null;
  title: string | null;
  path: string;
  /** The transcript cursor's id of the last message indexed (0: none yet). */
  indexedId: number;
  fileSize: number;
  fileMtimeMs: number;
}

export type SourceMeta = Omit<SourceRow, "indexedId" | "fileSize" | "fileMtimeMs">;

/** One turn part as indexed. */
export interface TurnRow {
  messageId: number;
  role: SearchRole;
  at: string | null;
  text: string;
}

export interface MatchFilters {
  agent?: string;
  host?: string;
  workDir?: string;
  tenantId?: string;
  status?: string;
  since?: string;
  until?: string;
  role?: SearchRole;
  origin?: SearchOrigin;
  /** Only these sessions (a confined caller); external conversations are then never seen. */
  sessionIds?: readonly string[];
}

export interface MatchRow extends Omit<SourceRow, "path" | "indexedId" | "fileSize" | "fileMtimeMs"> {
  messageId: number;
  role: SearchRole;
  at: string | null;
  /** The whole turn part, its matches between HIT_OPEN and HIT_CLOSE. */
  marked: string;
  rank: number;
}

export type SearchStore = ReturnType<typeof createSearchStore>;

const SOURCE_COLUMNS = `
  s.id, s.origin, s.agent, s.host, s.work_dir AS workDir, s.tenant_id AS tenantId, s.status,
  s.conversation_id AS conversationId, s.title`;

/** The search index's rows (SEARCH_MIGRATIONS): prepared statements, no business rules. */
export function createSearchStore(db: Database) {
  const getSource = db.query<SourceRow, [string]>(
    `SELECT ${SOURCE_COLUMNS}, s.path, s.indexed_id AS indexedId, s.file_size AS fileSize,
       s.file_mtime_ms AS fileMtimeMs FROM search_sources s WHERE s.id = ?`,
  );
  const upsert = db.query(
    `INSERT INTO search_sources (id, origin, agent, host, work_dir, tenant_id, status, conversation_id,
       title, path, updated_at)
     VALUES ($id, $origin, $agent, $host, $workDir, $tenantId, $status, $conversationId, $title, $path, $now)
     ON CONFLICT(id) DO UPDATE SET agent = $agent, host = $host, work_dir = $workDir, tenant_id = $tenantId,
       status = $status, conversation_id = $conversationId, title = coalesce($title, title), path = $path,
       updated_at = $now`,
  );
  const setStatus = db.query("UPDATE search_sources SET status = ? WHERE id = ?");
  const setTitle = db.query("UPDATE search_sources SET title = ? WHERE id = ? AND title IS NULL");
  const deleteFrom = db.query("DELETE FROM search_turns WHERE source_id = ? AND message_id >= ?");
  const insertTurn = db.query(
    "INSERT INTO search_turns (source_id, message_id, role, at, text) VALUES (?, ?, ?, ?, ?)",
  );
  const progress = db.query(
    `UPDATE search_sources SET indexed_id = ?, file_size = ?, file_mtime_ms = ?, updated_at = ? WHERE id = ?`,
  );
  const removeSource = db.query("DELETE FROM search_sources WHERE id = ?");
  const insertTurns = db.transaction((sourceId: string, turns: readonly TurnRow[]) => {
    for (const t of turns) insertTurn.run(sourceId, t.messageId, t.role, t.at, t.text);
  });

  return {
    source: (id: string): SourceRow | null => getSource.get(id),

    /** Records a conversation (or refreshes what is known of it); what was indexed is kept. */
    upsertSource(meta: SourceMeta): void {
      upsert.run({ ...prefixed(meta), $now: new Date().toISOString() });
    },

    setStatus(id: string, status: string): void {
      setStatus.run(status, id);
    },

    /** Names an untitled conversation (an external one by its first prompt). */
    nameIfUntitled(id: string, title: string): void {
      setTitle.run(title, id);
    },

    /** Forgets the source's turns from message `fromId` on (they are about to be indexed again). */
    forgetFrom(sourceId: string, fromId: number): void {
      deleteFrom.run(sourceId, fromId);
    },

    addTurns(sourceId: string, turns: readonly TurnRow[]): void {
      if (turns.length) insertTurns(sourceId, turns);
    },

    /** How far the source is indexed: its last message id, and the file as it was then. */
    saveProgress(sourceId: string, indexedId: number, file: { size: number; mtimeMs: number }): void {
      progress.run(indexedId, file.size, Math.floor(file.mtimeMs), new Date().toISOString(), sourceId);
    },

    remove(id: string): void {
      removeSource.run(id);
    },

    /** Every source of an origin (ids and paths), for a rebuild or an import. */
    sources(origin: SearchOrigin): Array<Pick<SourceRow, "id" | "path">> {
      return db
        .query<Pick<SourceRow, "id" | "path">, [string]>(
          "SELECT id, path FROM search_sources WHERE origin = ?",
        )
        .all(origin);
    },

    clear(origin: SearchOrigin): void {
      db.transaction(() => db.query("DELETE FROM search_sources WHERE origin = ?").run(origin))();
    },

    counts(): { sources: number; external: number; turns: number } {
      const row = db
        .query<{ sources: number; external: number }, []>(
          "SELECT count(*) AS sources, count(*) FILTER (WHERE origin = 'external') AS external FROM search_sources",
        )
        .get()!;
      const turns = db.query<{ n: number }, []>("SELECT count(*) AS n FROM search_turns").get()!.n;
      return { ...row, turns };
    },

    /**
     * The best `limit` turn parts for an FTS5 MATCH expression (query.ts), BM25 first. In two
     * steps: the ranking reads only rowids and scores (joined to the rows only when a filter needs
     * them), then the few winners are highlighted — highlight() in the ranking query would run on
     * every match of a common word before the sort cut them to `limit`.
     */
    match(expression: string, filters: MatchFilters, limit: number): MatchRow[] {
      const { where, params } = filterSql(filters);
      const joins = where
        ? "JOIN search_turns t ON t.id = search_text.rowid JOIN search_sources s ON s.id = t.source_id"
        : "";
      const ranked = guarded(() =>
        db
          .query<{ id: number; rank: number }, Record<string, string | number>>(
            `SELECT search_text.rowid AS id, search_text.rank AS rank FROM search_text ${joins}
             WHERE search_text MATCH $match ${where} ORDER BY search_text.rank LIMIT $limit`,
          )
          .all({ ...params, $match: expression, $limit: limit }),
      );
      if (ranked.length === 0) return [];
      const rows = guarded(() =>
        db
          .query<Omit<MatchRow, "rank"> & { rowid: number }, Record<string, string>>(
            `SELECT search_text.rowid AS rowid, ${SOURCE_COLUMNS}, t.message_id AS messageId, t.role, t.at,
               highlight(search_text, 0, '${HIT_OPEN}', '${HIT_CLOSE}') AS marked
             FROM search_text
             JOIN search_turns t ON t.id = search_text.rowid
             JOIN search_sources s ON s.id = t.source_id
             WHERE search_text MATCH $match AND search_text.rowid IN (SELECT value FROM json_each($ids))`,
          )
          .all({ $match: expression, $ids: JSON.stringify(ranked.map((r) => r.id)) }),
      );
      const byId = new Map(rows.map(({ rowid, ...row }) => [rowid, row]));
      return ranked.flatMap(({ id, rank }) => {
        const row = byId.get(id);
        return row ? [{ ...row, rank }] : [];
      });
    },
  };
}

/** Runs an FTS5 query; query.ts quotes every term, so a syntax error here is a last line of defence, never a 500. */
function guarded<T>(run: () => T): T {
  try {
    return run();
  } catch (error) {
    if (/fts5|syntax/i.test((error as Error).message))
      throw new AgError("SEARCH_QUERY_INVALID", `the query cannot be searched: ${(error as Error).message}`);
    throw error;
  }
}

function prefixed(meta: SourceMeta): Record<string, string | null> {
  return Object.fromEntries(Object.entries(meta).map(([k, v]) => [`$${k}`, v ?? null]));
}

/** The filters as SQL conditions (each a bound parameter, never spliced text). */
function filterSql(filters: MatchFilters): { where: string; params: Record<string, string> } {
  const conditions: string[] = [];
  const params: Record<string, string> = {};
  const equal = (column: string, name: string, value: string | undefined) => {
    if (value === undefined) return;
    conditions.push(`${column} = $${name}`);
    params[`$${name}`] = value;
  };
  equal("s.agent", "agent", filters.agent);
  equal("s.host", "host", filters.host);
  equal("s.tenant_id", "tenant", filters.tenantId);
  equal("s.status", "status", filters.status);
  equal("s.origin", "origin", filters.origin);
  equal("t.role", "role", filters.role);
  if (filters.since !== undefined) {
    conditions.push("t.at >= $since");
    params.$since = new Date(filters.since).toISOString();
  }
  if (filters.until !== undefined) {
    conditions.push("t.at < $until");
    params.$until = new Date(filters.until).toISOString();
  }
  if (filters.workDir !== undefined) {
    const dir = filters.workDir.replace(/\/+$/, "") || "/";
    conditions.push("(s.work_dir = $dir OR s.work_dir LIKE $below ESCAPE '\\')");
    params.$dir = dir;
    params.$below = `${dir === "/" ? "" : dir.replace(/[\\%_]/g, "\\$&")}/%`;
  }
  if (filters.sessionIds !== undefined) {
    conditions.push("s.origin = 'session' AND s.id IN (SELECT value FROM json_each($ids))");
    params.$ids = JSON.stringify(filters.sessionIds);
  }
  return { where: conditions.map((c) => `AND ${c}`).join(" "), params };
}
