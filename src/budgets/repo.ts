import type { Database } from "bun:sqlite";
import type { BudgetState } from "./state.ts";

/** A session's budget as stored. */
export interface BudgetRow {
  sessionId: string;
  tenantId: string | null;
  usd: number | null;
  tokens: number | null;
  spentUsd: number;
  spentTokens: number;
  unpriced: string[];
  state: BudgetState;
  reachedBy: string | null;
  heldPrompt: string | null;
  /** The session's own interruptAtCap (null: the server's). */
  interrupt: boolean | null;
}

interface Row {
  session_id: string;
  tenant_id: string | null;
  usd: number | null;
  tokens: number | null;
  spent_usd: number;
  spent_tokens: number;
  unpriced: string;
  state: string;
  reached_by: string | null;
  held_prompt: string | null;
  interrupt: number | null;
}

/** Prepared statements over session_budgets, budget_spend and budget_overrides; no rules. */
export function createBudgetRepo(db: Database) {
  const getOne = db.query<Row, [string]>("SELECT * FROM session_budgets WHERE session_id = ?");
  const all = db.query<Row, []>("SELECT * FROM session_budgets ORDER BY updated_at DESC");
  const upsert = db.query(
    `INSERT INTO session_budgets (session_id, tenant_id, usd, tokens, spent_usd, spent_tokens, unpriced, state, reached_by, held_prompt, interrupt, updated_at)
     VALUES ($sessionId, $tenantId, $usd, $tokens, $spentUsd, $spentTokens, $unpriced, $state, $reachedBy, $heldPrompt, $interrupt, $updatedAt)
     ON CONFLICT(session_id) DO UPDATE SET tenant_id = $tenantId, usd = $usd, tokens = $tokens,
       spent_usd = $spentUsd, spent_tokens = $spentTokens, unpriced = $unpriced, state = $state,
       reached_by = $reachedBy, held_prompt = $heldPrompt, interrupt = $interrupt, updated_at = $updatedAt`,
  );
  const spend = db.query(
    "INSERT INTO budget_spend (session_id, tenant_id, at, usd, tokens) VALUES (?, ?, ?, ?, ?)",
  );
  const spentSince = db.query<{ usd: number | null }, [string]>(
    "SELECT SUM(usd) AS usd FROM budget_spend WHERE at >= ?",
  );
  const tenantSpentSince = db.query<{ usd: number | null }, [string, string]>(
    "SELECT SUM(usd) AS usd FROM budget_spend WHERE tenant_id = ? AND at >= ?",
  );
  const turns = db.query<{ at: string; usd: number; tokens: number }, [string]>(
    "SELECT at, usd, tokens FROM budget_spend WHERE session_id = ? ORDER BY id",
  );
  const override = db.query<{ usd: number | null }, [string]>(
    "SELECT usd FROM budget_overrides WHERE scope = ?",
  );
  const setOverride = db.query(
    `INSERT INTO budget_overrides (scope, usd, updated_at) VALUES (?, ?, ?)
     ON CONFLICT(scope) DO UPDATE SET usd = excluded.usd, updated_at = excluded.updated_at`,
  );

  return {
    get(sessionId: string): BudgetRow | null {
      const row = getOne.get(sessionId);
      return row ? fromRow(row) : null;
    },
    list(): BudgetRow[] {
      return all.all().map(fromRow);
    },
    save(row: BudgetRow, at: string): void {
      upsert.run({
        $sessionId: row.sessionId,
        $tenantId: row.tenantId,
        $usd: row.usd,
        $tokens: row.tokens,
        $spentUsd: row.spentUsd,
        $spentTokens: row.spentTokens,
        $unpriced: JSON.stringify(row.unpriced),
        $state: row.state,
        $reachedBy: row.reachedBy,
        $heldPrompt: row.heldPrompt,
        $interrupt: row.interrupt === null ? null : row.interrupt ? 1 : 0,
        $updatedAt: at,
      });
    },
    /** One increase of a session's spend (a turn's, as counted at its end). */
    addSpend(sessionId: string, tenantId: string | null, at: string, usd: number, tokens: number): void {
      spend.run(sessionId, tenantId, at, usd, tokens);
    },
    /** Dollars spent since `since` (ISO), by one tenant or (null) by everyone. */
    spentSince(since: string, tenantId: string | null = null): number {
      const row = tenantId === null ? spentSince.get(since) : tenantSpentSince.get(tenantId, since);
      return row?.usd ?? 0;
    },
    /** A session's spend, increase by increase. */
    turns(sessionId: string) {
      return turns.all(sessionId);
    },
    /** A server or tenant cap set over the API (undefined: none, the config's applies). */
    override(scope: string): number | null | undefined {
      const row = override.get(scope);
      return row ? row.usd : undefined;
    },
    setOverride(scope: string, usd: number | null, at: string): void {
      setOverride.run(scope, usd, at);
    },
  };
}

export type BudgetRepo = ReturnType<typeof createBudgetRepo>;

function fromRow(row: Row): BudgetRow {
  return {
    sessionId: row.session_id,
    tenantId: row.tenant_id,
    usd: row.usd,
    tokens: row.tokens,
    spentUsd: row.spent_usd,
    spentTokens: row.spent_tokens,
    unpriced: JSON.parse(row.unpriced) as string[],
    state: row.state as BudgetState,
    reachedBy: row.reached_by,
    heldPrompt: row.held_prompt,
    interrupt: row.interrupt === null ? null : row.interrupt === 1,
  };
}
