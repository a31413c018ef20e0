import { Type } from "@sinclair/typebox";
import { Elysia, t } from "elysia";
import { type AuditLog, AuditRecord, AuditVerification } from "../../audit/index.ts";
import { wholeNumberQuery } from "./params.ts";

const tags = ["audit"];
const Query = t.Object({
  limit: t.Optional(wholeNumberQuery({ minimum: 1, maximum: 500, default: 100 })),
  before: t.Optional(wholeNumberQuery({ minimum: 1, description: "only records with a smaller id" })),
});

/** The audit log: newest first, paged by id; and a check of its hash chain. */
export function auditRoutes(audit: AuditLog) {
  return new Elysia({ name: "routes/audit" })
    .get("/v1/audit", ({ query }) => audit.list(query), {
      query: Query,
      response: Type.Array(AuditRecord),
      detail: { summary: "Audit records, newest first; page with ?before=<oldest id seen>", tags },
    })
    .get("/v1/audit/verify", () => audit.verify(), {
      response: AuditVerification,
      detail: { summary: "Re-compute the hash chain: ok, or the first record that breaks it", tags },
    });
}
