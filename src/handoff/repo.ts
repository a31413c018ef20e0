import type { Database } from "bun:sqlite";
import type { HandoffPolicy } from "../config/schema.ts";

/** Statements over session_handoffs and handoff_policies; no rules. */
export function createHandoffRepo(db: Database) {
  const insert = db.query(
    "INSERT INTO session_handoffs (from_id, to_id, trigger, brief, created_at) VALUES (?, ?, ?, ?, ?)",
  );
  const to = db.query<{ to_id: string }, [string]>(
    "SELECT to_id FROM session_handoffs WHERE from_id = ? ORDER BY created_at DESC LIMIT 1",
  );
  const from = db.query<{ from_id: string }, [string]>(
    "SELECT from_id FROM session_handoffs WHERE to_id = ?",
  );
  const brief = db.query<{ brief: string }, [string]>("SELECT brief FROM session_handoffs WHERE to_id = ?");
  const setPolicy = db.query(
    `INSERT INTO handoff_policies (session_id, policy) VALUES (?, ?)
     ON CONFLICT(session_id) DO UPDATE SET policy = excluded.policy`,
  );
  const policy = db.query<{ policy: string }, [string]>(
    "SELECT policy FROM handoff_policies WHERE session_id = ?",
  );

  return {
    link(fromId: string, toId: string, trigger: string, text: string, at: string): void {
      insert.run(fromId, toId, trigger, text, at);
    },
    /** The session `id` handed its task to (its latest handoff), and the one it took it from. */
    links(id: string): { handedOffTo: string | null; handedOffFrom: string | null } {
      return { handedOffTo: to.get(id)?.to_id ?? null, handedOffFrom: from.get(id)?.from_id ?? null };
    },
    brief(toId: string): string | null {
      return brief.get(toId)?.brief ?? null;
    },
    setPolicy(sessionId: string, value: HandoffPolicy): void {
      setPolicy.run(sessionId, JSON.stringify(value));
    },
    policy(sessionId: string): HandoffPolicy | null {
      const row = policy.get(sessionId);
      return row ? (JSON.parse(row.policy) as HandoffPolicy) : null;
    },
  };
}

export type HandoffRepo = ReturnType<typeof createHandoffRepo>;
