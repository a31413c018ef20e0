import type { AuditInput, AuditOutcome } from "./record.ts";
import type { AuditLog } from "./service.ts";

/**
 * Which HTTP requests leave an audit record: the ones that change who runs what (sessions
 * created, killed, approved, rejected, their permissions; templates; API keys) and every
 * refusal of access. Reads are not audited.
 */
const AUDITED: ReadonlyArray<{ method: string; pattern: RegExp; action: string; target?: "body" }> = [
  { method: "POST", pattern: /^\/v1\/sessions$/, action: "session.create", target: "body" },
  { method: "POST", pattern: /^\/v1\/sessions\/batch$/, action: "session.create.batch" },
  { method: "DELETE", pattern: /^\/v1\/sessions\/batch$/, action: "session.kill.batch" },
  { method: "DELETE", pattern: /^\/v1\/sessions\/([^/]+)$/, action: "session.kill" },
  { method: "POST", pattern: /^\/v1\/sessions\/([^/]+)\/approve$/, action: "session.approve" },
  { method: "POST", pattern: /^\/v1\/sessions\/([^/]+)\/reject$/, action: "session.reject" },
  { method: "POST", pattern: /^\/v1\/sessions\/([^/]+)\/fork$/, action: "session.fork", target: "body" },
  { method: "POST", pattern: /^\/v1\/sessions\/([^/]+)\/spawn$/, action: "session.spawn", target: "body" },
  { method: "POST", pattern: /^\/v1\/sessions\/([^/]+)\/resume$/, action: "session.resume" },
  { method: "PUT", pattern: /^\/v1\/sessions\/([^/]+)\/permissions$/, action: "session.permissions" },
  { method: "PUT", pattern: /^\/v1\/sessions\/([^/]+)\/permission-profile$/, action: "session.permissions" },
  { method: "POST", pattern: /^\/v1\/templates$/, action: "template.create", target: "body" },
  { method: "PUT", pattern: /^\/v1\/templates\/([^/]+)$/, action: "template.update" },
  { method: "DELETE", pattern: /^\/v1\/templates\/([^/]+)$/, action: "template.delete" },
  { method: "POST", pattern: /^\/v1\/auth\/keys$/, action: "key.create", target: "body" },
  { method: "DELETE", pattern: /^\/v1\/auth\/keys\/([^/]+)$/, action: "key.revoke" },
];

export interface RequestParty {
  actor: string;
  tenantId: string | null;
  ip: string | null;
}

export function outcomeOf(status: number): AuditOutcome {
  if (status === 401 || status === 403) return "denied";
  return status < 400 ? "success" : "failure";
}

/** Records a finished request if it is one the audit log keeps. */
export async function auditRequest(
  audit: Pick<AuditLog, "append">,
  request: { method: string; path: string; status: number; body: () => Promise<unknown> },
  party: RequestParty,
): Promise<void> {
  const outcome = outcomeOf(request.status);
  const rule = AUDITED.find((r) => r.method === request.method && r.pattern.test(request.path));
  if (!rule && outcome !== "denied") return;
  const entry: AuditInput = {
    ...party,
    action: rule?.action ?? "auth.denied",
    target: rule ? await targetOf(rule, request, outcome) : `${request.method} ${request.path}`,
    outcome,
  };
  audit.append(entry);
}

async function targetOf(
  rule: (typeof AUDITED)[number],
  request: { path: string; body: () => Promise<unknown> },
  outcome: AuditOutcome,
): Promise<string | null> {
  if (rule.target === "body" && outcome === "success") {
    const body = (await request.body().catch(() => null)) as { id?: unknown } | null;
    if (typeof body?.id === "string") return body.id;
  }
  const id = rule.pattern.exec(request.path)?.[1];
  return id ? decodeURIComponent(id) : null;
}
