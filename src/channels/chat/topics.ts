import type { Database } from "bun:sqlite";

/** Which forum topic of the group holds which session (the `chat_topics` table of state.db). */
export interface TopicStore {
  threadOf(sessionId: string): number | null;
  sessionOf(threadId: number): string | null;
  remember(sessionId: string, threadId: number, at: string): void;
  /** The topic is gone (deleted in the chat): the next event opens a new one. */
  forget(sessionId: string): void;
}

export function createTopicStore(db: Database, groupId: string): TopicStore {
  const byThread = db.query<{ session_id: string }, [string, number]>(
    "SELECT session_id FROM chat_topics WHERE group_id = ? AND thread_id = ? ORDER BY created_at DESC LIMIT 1",
  );
  const bySession = db.query<{ thread_id: number }, [string, string]>(
    "SELECT thread_id FROM chat_topics WHERE group_id = ? AND session_id = ?",
  );
  const upsert = db.query(
    `INSERT INTO chat_topics (group_id, session_id, thread_id, created_at) VALUES (?, ?, ?, ?)
     ON CONFLICT (group_id, session_id) DO UPDATE SET thread_id = excluded.thread_id, created_at = excluded.created_at`,
  );
  const remove = db.query("DELETE FROM chat_topics WHERE group_id = ? AND session_id = ?");
  return {
    threadOf: (sessionId) => bySession.get(groupId, sessionId)?.thread_id ?? null,
    sessionOf: (threadId) => byThread.get(groupId, threadId)?.session_id ?? null,
    remember: (sessionId, threadId, at) => void upsert.run(groupId, sessionId, threadId, at),
    forget: (sessionId) => void remove.run(groupId, sessionId),
  };
}
