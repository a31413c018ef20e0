import { addressBudget } from "../auth/rate-limit.ts";
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
  { method: "POST", pattern: /^\/v1\/sessions\/([^/]+)\/answer$/, action: "session.answer" },
  { method: "POST", pattern: /^\/v1\/sessions\/([^/]+)\/fork$/, action: "session.fork", target: "body" },
  { method: "POST", pattern: /^\/v1\/sessions\/([^/]+)\/spawn$/, action: "session.spawn", target: "body" },
  { method: "POST", pattern: /^\/v1\/sessions\/([^/]+)\/resume$/, action: "session.resume" },
  { method: "POST", pattern: /^\/v1\/sessions\/([^/]+)\/consensus$/, action: "consensus.start" },
  { method: "PUT", pattern: /^\/v1\/sessions\/([^/]+)\/permissions$/, action: "session.permissions" },
  { method: "PUT", pattern: /^\/v1\/sessions\/([^/]+)\/permission-profile$/, action: "session.permissions" },
  { method: "POST", pattern: /^\/v1\/templates$/, action: "template.create", target: "body" },
  { method: "PUT", pattern: /^\/v1\/templates\/([^/]+)$/, action: "template.update" },
  { method: "DELETE", pattern: /^\/v1\/templates\/([^/]+)$/, action: "template.delete" },
  { method: "POST", pattern: /^\/v1\/auth\/keys$/, action: "key.create", target: "body" },
  { method: "DELETE", pattern: /^\/v1\/auth\/keys\/([^/]+)$/, action: "key.revoke" },
  { method: "DELETE", pattern: /^\/v1\/untracked\/([^/]+)$/, action: "session.untracked.end" },
  { method: "POST", pattern: /^\/v1\/untracked\/([^/]+)\/adopt$/, action: "session.untracked.adopt" },
];

/** Whether a request is one the audit log records when it succeeds (an action, not a read). */
export function isAudited(method: string, path: string): boolean {
  const trimmed = path.length > 1 ? path.replace(/\/+$/, "") : path;
  return AUDITED.some((r) => r.method === method && r.pattern.test(trimmed));
}

/** Refusals of what an authenticated key asked beyond its bounds: each one is recorded. */
const BOUNDS = new Set([
  "TENANT_WORKDIR_DENIED",
  "PERMISSION_MODE_DENIED",
  "CREATOR_WORKDIR_DENIED",
  "SESSION_DEPTH_LIMIT",
]);

export interface RequestParty {
  actor: string;
  tenantId: string | null;
  ip: string | null;
}

export interface FinishedRequest {
  method: string;
  path: string;
  status: number;
  body: () => Promise<unknown>;
}

/** A target names a request, not its payload: long paths are cut. */
const MAX_TARGET_CHARS = 256;
/** Refusals from one address are recorded at most once per window; the next record counts the rest. */
const DENIAL_WINDOW_MS = 60_000;
/** Addresses remembered for that; past this many, the oldest are forgotten. */
const DENIAL_ADDRESSES = 10_000;

export function outcomeOf(status: number): AuditOutcome {
  if (status === 401 || status === 403) return "denied";
  return status < 400 ? "success" : "failure";
}

/**
 * Records finished requests that the audit log keeps. Denials are what a stranger can cause at
 * will, so they are throttled per address: the log stays a record, not a disk-filling channel.
 */
export function createAuditTrail(audit: Pick<AuditLog, "append">, now: () => number = Date.now) {
  const denials = new Map<string, { at: number; suppressed: number }>();

  function admitDenial(ip: string | null): number | null {
    const key = addressBudget(ip);
    const seen = denials.get(key);
    const at = now();
    if (seen && at - seen.at < DENIAL_WINDOW_MS) {
      seen.suppressed++;
      return null;
    }
    const suppressed = seen?.suppressed ?? 0;
    denials.delete(key);
    denials.set(key, { at, suppressed: 0 });
    if (denials.size > DENIAL_ADDRESSES) denials.delete(denials.keys().next().value!);
    return suppressed;
  }

  return {
    async record(request: FinishedRequest, party: RequestParty): Promise<void> {
      const outcome = outcomeOf(request.status);
      const path = request.path.length > 1 ? request.path.replace(/\/+$/, "") : request.path;
      const rule = AUDITED.find((r) => r.method === request.method && r.pattern.test(path));
      if (!rule && outcome !== "denied") return;
      let target = rule ? await targetOf(rule, path, request.body, outcome) : `${request.method} ${path}`;
      // A key asking past its bounds (a tenant's workDir outside its own: SPEC names this record,
      // with the tenant; a session key's session more permissive, elsewhere or deeper than its
      // own). The caller is authenticated, so it is not throttled like a stranger's refusals.
      if (request.status === 403 && BOUNDS.has((await codeOf(request.body)) as string)) {
        audit.append({
          ...party,
          action: "session.action.denied",
          target: clip(`${request.method} ${path}`),
          outcome,
        });
        return;
      }
      if (outcome === "denied") {
        const suppressed = admitDenial(party.ip);
        if (suppressed === null) return;
        if (suppressed > 0) target = `${target} (+${suppressed} more refused since the last record)`;
      }
      const entry: AuditInput = {
        ...party,
        action: rule?.action ?? "auth.denied",
        target: target === null ? null : clip(target),
        outcome,
      };
      audit.append(entry);
    },
  };
}

export type AuditTrail = ReturnType<typeof createAuditTrail>;

async function targetOf(
  rule: (typeof AUDITED)[number],
  path: string,
  body: () => Promise<unknown>,
  outcome: AuditOutcome,
): Promise<string | null> {
  if (rule.target === "body" && outcome === "success") {
    const parsed = (await body().catch(() => null)) as { id?: unknown } | null;
    if (typeof parsed?.id === "string") return parsed.id;
  }
  const id = rule.pattern.exec(path)?.[1];
  return id ? safeDecode(id) : null;
}

async function codeOf(body: () => Promise<unknown>): Promise<unknown> {
  const parsed = (await body().catch(() => null)) as { code?: unknown } | null;
  return parsed?.code;
}

function safeDecode(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

function clip(text: string): string {
  return text.length > MAX_TARGET_CHARS ? `${text.slice(0, MAX_TARGET_CHARS - 1)}…` : text;
}
