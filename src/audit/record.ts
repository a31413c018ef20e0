import { type Static, Type } from "@sinclair/typebox";
import { literalUnion } from "../shared/schema.ts";

export const AUDIT_OUTCOMES = ["success", "failure", "denied"] as const;
export type AuditOutcome = (typeof AUDIT_OUTCOMES)[number];

/** CONTRACT §8: one append-only, hash-chained record. */
export const AuditRecord = Type.Object({
  id: Type.Integer({ description: "increasing; page with ?before=<id>" }),
  timestamp: Type.String({ format: "date-time" }),
  actor: Type.String({ description: "master, anonymous, key:<id>, or unauthenticated" }),
  tenantId: Type.Union([Type.String(), Type.Null()]),
  action: Type.String({ description: "e.g. session.create, session.kill, session.approve, auth.denied" }),
  target: Type.Union([Type.String(), Type.Null()]),
  outcome: literalUnion(AUDIT_OUTCOMES),
  ip: Type.Union([Type.String(), Type.Null()]),
  prevHash: Type.String(),
  hash: Type.String({ description: "SHA-256 of this record's fields and prevHash" }),
});
export type AuditRecord = Static<typeof AuditRecord>;

export type AuditInput = Pick<AuditRecord, "actor" | "tenantId" | "action" | "target" | "outcome" | "ip">;

export const AuditVerification = Type.Object({
  ok: Type.Boolean(),
  checked: Type.Integer(),
  brokenAt: Type.Union([Type.Integer(), Type.Null()], { description: "first record whose hash fails" }),
});
export type AuditVerification = Static<typeof AuditVerification>;
