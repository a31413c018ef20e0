import type { Database } from "bun:sqlite";
import type { CheckpointFile } from "./checkpoint.ts";

/** A checkpoint's row: the commits around its turn and what the turn changed. */
export interface CheckpointRecord {
  sessionId: string;
  turn: number;
  /** The folder checkpointed (kept: a session's record may be gone when its refs are removed). */
  folder: string;
  prompt: string | null;
  startedAt: string;
  endedAt: string | null;
  beforeCommit: string;
  afterCommit: string | null;
  files: CheckpointFile[];
  added: number;
  removed: number;
}

/** The present a code rewind replaced, kept so the rewind can be taken back. */
export interface UndoRecord {
  sessionId: string;
  folder: string;
  commit: string;
  turn: number;
  createdAt: string;
}

interface Row {
  session_id: string;
  turn: number;
  folder: string;
  prompt: string | null;
  started_at: string;
  ended_at: string | null;
  before_commit: string;
  after_commit: string | null;
  files: string;
  added: number;
  removed: number;
}

const toRecord = (row: Row): CheckpointRecord => ({
  sessionId: row.session_id,
  turn: row.turn,
  folder: row.folder,
  prompt: row.prompt,
  startedAt: row.started_at,
  endedAt: row.ended_at,
  beforeCommit: row.before_commit,
  afterCommit: row.after_commit,
  files: JSON.parse(row.files) as CheckpointFile[],
  added: row.added,
  removed: row.removed,
});

export type CheckpointRepo = ReturnType<typeof createCheckpointRepo>;

export function createCheckpointRepo(db: Database) {
  const list = db.query<Row, [string]>("SELECT * FROM checkpoints WHERE session_id = ? ORDER BY turn");
  const one = db.query<Row, [string, number]>("SELECT * FROM checkpoints WHERE session_id = ? AND turn = ?");
  const last = db.query<Row, [string]>(
    "SELECT * FROM checkpoints WHERE session_id = ? ORDER BY turn DESC LIMIT 1",
  );
  const insert = db.query(
    `INSERT INTO checkpoints (session_id, turn, folder, prompt, started_at, before_commit)
     VALUES ($sessionId, $turn, $folder, $prompt, $startedAt, $beforeCommit)`,
  );
  const end = db.query(
    `UPDATE checkpoints SET ended_at = $endedAt, after_commit = $afterCommit, files = $files,
       added = $added, removed = $removed WHERE session_id = $sessionId AND turn = $turn`,
  );
  const removeTurn = db.query("DELETE FROM checkpoints WHERE session_id = ? AND turn = ?");
  const removeAll = db.query("DELETE FROM checkpoints WHERE session_id = ?");
  const sessions = db.query<{ session_id: string; folder: string }, []>(
    "SELECT DISTINCT session_id, folder FROM checkpoints UNION SELECT session_id, folder FROM checkpoint_undo",
  );
  const undoOf = db.query<
    { session_id: string; folder: string; commit_id: string; turn: number; created_at: string },
    [string]
  >("SELECT * FROM checkpoint_undo WHERE session_id = ?");
  const setUndo = db.query(
    `INSERT INTO checkpoint_undo (session_id, folder, commit_id, turn, created_at) VALUES (?, ?, ?, ?, ?)
     ON CONFLICT(session_id) DO UPDATE SET folder = excluded.folder, commit_id = excluded.commit_id,
       turn = excluded.turn, created_at = excluded.created_at`,
  );
  const removeUndo = db.query("DELETE FROM checkpoint_undo WHERE session_id = ?");

  return {
    list: (sessionId: string): CheckpointRecord[] => list.all(sessionId).map(toRecord),
    get(sessionId: string, turn: number): CheckpointRecord | null {
      const row = one.get(sessionId, turn);
      return row ? toRecord(row) : null;
    },
    last(sessionId: string): CheckpointRecord | null {
      const row = last.get(sessionId);
      return row ? toRecord(row) : null;
    },
    begin(
      record: Pick<
        CheckpointRecord,
        "sessionId" | "turn" | "folder" | "prompt" | "startedAt" | "beforeCommit"
      >,
    ): void {
      insert.run(record as never);
    },
    end(
      record: Pick<
        CheckpointRecord,
        "sessionId" | "turn" | "endedAt" | "afterCommit" | "files" | "added" | "removed"
      >,
    ): void {
      end.run({ ...record, files: JSON.stringify(record.files) } as never);
    },
    removeTurn: (sessionId: string, turn: number) => void removeTurn.run(sessionId, turn),
    /** Every session that has checkpoints or an undo kept, with its folder. */
    sessions: (): Array<{ sessionId: string; folder: string }> =>
      sessions.all().map((row) => ({ sessionId: row.session_id, folder: row.folder })),
    undo(sessionId: string): UndoRecord | null {
      const row = undoOf.get(sessionId);
      return row
        ? {
            sessionId: row.session_id,
            folder: row.folder,
            commit: row.commit_id,
            turn: row.turn,
            createdAt: row.created_at,
          }
        : null;
    },
    setUndo: (undo: UndoRecord) =>
      void setUndo.run(undo.sessionId, undo.folder, undo.commit, undo.turn, undo.createdAt),
    clearUndo: (sessionId: string) => void removeUndo.run(sessionId),
    removeSession(sessionId: string): void {
      removeAll.run(sessionId);
      removeUndo.run(sessionId);
    },
  };
}
