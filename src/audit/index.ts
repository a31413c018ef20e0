export * from "./chain.ts";
export * from "./record.ts";
export { type AuditLog, createAuditLog } from "./service.ts";
export { type AuditTrail, createAuditTrail, isAudited, outcomeOf, type RequestParty } from "./trail.ts";
