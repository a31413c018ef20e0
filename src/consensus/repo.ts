import type { Database } from "bun:sqlite";
import type { Consensus } from "./consensus.ts";

/** Reviews as stored: the record whole (JSON), the brief beside it (reviewers started after a restart get the same one). */
export interface ConsensusRepo {
  insert(record: Consensus, brief: string): void;
  save(record: Consensus): void;
  get(id: string): Consensus | null;
  brief(id: string): string | null;
  /** Newest first; only the reviews of `sessionId` when given. */
  list(sessionId?: string): Consensus[];
  running(): Consensus[];
}

interface Row {
  record: string;
}

export function createConsensusRepo(db: Database): ConsensusRepo {
  const insert = db.query(
    `INSERT INTO consensus (id, session_id, status, record, brief, created_at)
     VALUES ($id, $sessionId, $status, $record, $brief, $createdAt)`,
  );
  const save = db.query("UPDATE consensus SET status = $status, record = $record WHERE id = $id");
  const byId = db.query<Row, [string]>("SELECT record FROM consensus WHERE id = ?");
  const briefOf = db.query<{ brief: string | null }, [string]>("SELECT brief FROM consensus WHERE id = ?");
  const all = db.query<Row, { sessionId: string | null }>(
    `SELECT record FROM consensus WHERE ($sessionId IS NULL OR session_id = $sessionId)
     ORDER BY created_at DESC, rowid DESC`,
  );
  const running = db.query<Row, []>(
    "SELECT record FROM consensus WHERE status = 'running' ORDER BY created_at, rowid",
  );
  const parse = (row: Row) => JSON.parse(row.record) as Consensus;
  return {
    insert(record, brief) {
      insert.run({
        id: record.id,
        sessionId: record.sessionId,
        status: record.status,
        record: JSON.stringify(record),
        brief,
        createdAt: record.createdAt,
      });
    },
    save: (record) => void save.run({ id: record.id, status: record.status, record: JSON.stringify(record) }),
    get(id) {
      const row = byId.get(id);
      return row ? parse(row) : null;
    },
    brief: (id) => briefOf.get(id)?.brief ?? null,
    list: (sessionId) => all.all({ sessionId: sessionId ?? null }).map(parse),
    running: () => running.all().map(parse),
  };
}
