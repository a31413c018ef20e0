import { createHash } from "node:crypto";
import type { AuditRecord, AuditVerification } from "./record.ts";

/** The first record's prevHash. */
export const GENESIS_HASH = "0".repeat(64);

/**
 * The hash of a record: SHA-256 over its fields in a fixed order (JSON array, so no field can
 * bleed into another) and the previous record's hash. Changing, removing or reordering any
 * record breaks every hash after it.
 */
export function recordHash(record: Omit<AuditRecord, "hash">): string {
  const canonical = JSON.stringify([
    record.id,
    record.timestamp,
    record.actor,
    record.tenantId,
    record.action,
    record.target,
    record.outcome,
    record.ip,
    record.prevHash,
  ]);
  return createHash("sha256").update(canonical).digest("hex");
}

/** Walks records in id order; the first one whose link or hash does not hold breaks the chain. */
export function verifyChain(records: Iterable<AuditRecord>): AuditVerification {
  let previous = GENESIS_HASH;
  let checked = 0;
  for (const record of records) {
    checked++;
    if (record.prevHash !== previous || recordHash(record) !== record.hash) {
      return { ok: false, checked, brokenAt: record.id };
    }
    previous = record.hash;
  }
  return { ok: true, checked, brokenAt: null };
}
