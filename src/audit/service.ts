import type { Database } from "bun:sqlite";
import type { Clock } from "../shared/clock.ts";
import { camelize } from "../shared/rows.ts";
import { GENESIS_HASH, recordHash, verifyChain } from "./chain.ts";
import type { AuditInput, AuditRecord, AuditVerification } from "./record.ts";

export interface AuditLog {
  append(input: AuditInput): AuditRecord;
  /** Newest first: up to `limit` records with an id below `before`. */
  list(query?: { limit?: number; before?: number }): AuditRecord[];
  /** Re-computes the whole chain from the first record. */
  verify(): AuditVerification;
}

interface AuditRow {
  id: number;
  timestamp: string;
  actor: string;
  tenant_id: string | null;
  action: string;
  target: string | null;
  outcome: AuditRecord["outcome"];
  ip: string | null;
  prev_hash: string;
  hash: string;
}

/**
 * The audit log in state.db. Rows cannot be updated or deleted (triggers refuse it); each
 * append reads the last hash and writes the next record in one immediate transaction, so two
 * writers cannot fork the chain.
 */
export function createAuditLog(deps: { db: Database; clock: Clock }): AuditLog {
  const { db } = deps;
  const last = db.query<Pick<AuditRow, "id" | "hash">, []>(
    "SELECT id, hash FROM audit ORDER BY id DESC LIMIT 1",
  );
  const insert = db.query(
    `INSERT INTO audit (id, timestamp, actor, tenant_id, action, target, outcome, ip, prev_hash, hash)
     VALUES ($id, $timestamp, $actor, $tenantId, $action, $target, $outcome, $ip, $prevHash, $hash)`,
  );
  const page = db.query<AuditRow, { before: number; limit: number }>(
    "SELECT * FROM audit WHERE id < $before ORDER BY id DESC LIMIT $limit",
  );
  const all = db.query<AuditRow, []>("SELECT * FROM audit ORDER BY id");

  const append = db.transaction((input: AuditInput): AuditRecord => {
    const previous = last.get();
    const unsigned = {
      id: (previous?.id ?? 0) + 1,
      timestamp: new Date(deps.clock.now()).toISOString(),
      ...input,
      prevHash: previous?.hash ?? GENESIS_HASH,
    };
    const record = { ...unsigned, hash: recordHash(unsigned) };
    insert.run({ ...record });
    return record;
  });

  return {
    append: (input) => append.immediate(input),
    list: ({ limit = 100, before = Number.MAX_SAFE_INTEGER } = {}) =>
      page.all({ before, limit }).map(toRecord),
    verify: () => verifyChain(lazy(all.iterate(), toRecord)),
  };
}

function* lazy<A, B>(rows: Iterable<A>, map: (a: A) => B): Generator<B> {
  for (const row of rows) yield map(row);
}

/** The audit table's columns are the record's fields (an append-only record has nothing to fold). */
function toRecord(row: AuditRow): AuditRecord {
  return camelize(row);
}
