import type { PendingPermission } from "../events/names.ts";
import { hintsFor } from "../sessions/index.ts";
import { describeConsensus, isConsensusLike } from "./consensus-summary.ts";

/**
 * The plain-language line an agent reads first in an MCP tool result, before the JSON: the
 * session's state, what it waits for (the permission's tool and detail, the question and its
 * options) and which tool to call next. Built from the REST body the tool answered, so it never
 * says more than the JSON does.
 */

/** The fields of a session the summary reads; any REST body with an id and a status fits. */
export interface SessionLike {
  id: string;
  name?: string;
  status: string;
  workDir?: string;
  pendingPermission?: PendingPermission | null;
  lastActivityAt?: string;
  reused?: boolean;
}

export function isSessionLike(value: unknown): value is SessionLike {
  if (value === null || typeof value !== "object" || Array.isArray(value)) return false;
  const v = value as Record<string, unknown>;
  return typeof v.id === "string" && typeof v.status === "string" && "pendingPermission" in v;
}

/** What the session waits for, in a phrase, or null when it waits for nothing. */
export function waitingFor(pending: PendingPermission | null | undefined): string | null {
  if (!pending) return null;
  if (pending.kind === "question") {
    const options = pending.options?.map((o) => `${o.index}. ${o.label}`).join(", ");
    return `a question: "${pending.question ?? pending.detail}"${options ? ` (options: ${options})` : ""}`;
  }
  return `permission for ${pending.tool ?? pending.kind}: ${pending.detail}`;
}

/** `Session "name" (id) is permission_prompt: waits for … Next: …`. */
export function describeSession(session: SessionLike, now = Date.now()): string {
  const label = session.name ? `"${session.name}" (${session.id})` : session.id;
  const reused = session.reused ? " (an idle session reused)" : "";
  const waits = waitingFor(session.pendingPermission);
  const idleMs = session.lastActivityAt ? Math.max(0, now - Date.parse(session.lastActivityAt)) : 0;
  const [next] = hintsFor(
    {
      id: session.id,
      status: session.status as never,
      pendingPermission: session.pendingPermission ?? null,
    },
    idleMs,
    "mcp",
  );
  const action = next ? next.slice(next.lastIndexOf(": ") + 2) : "";
  return [
    `Session ${label}${reused} is ${session.status}.`,
    waits ? `It waits for ${waits}.` : "",
    action ? `Next: ${action}.` : "",
  ]
    .filter(Boolean)
    .join(" ");
}

/** One line per session of a list, newest first; an empty list says so and how to start one. */
export function describeSessions(sessions: SessionLike[], now = Date.now()): string {
  if (sessions.length === 0) return "No sessions. Next: call create_session to start one.";
  const lines = sessions.map((s) => `- ${describeSession(s, now)}`);
  return [`${sessions.length} session${sessions.length === 1 ? "" : "s"}:`, ...lines].join("\n");
}

/**
 * The summary of a tool's result, or null when it has none (memory, pipelines, screens). Knows
 * the session-shaped bodies: one session, a list of them, a batch, a delivery, health; and a
 * consensus review.
 */
export function summarize(args: Record<string, unknown>, result: unknown): string | null {
  if (isSessionLike(result)) return describeSession(result);
  if (isConsensusLike(result)) return describeConsensus(result);
  if (Array.isArray(result) && result.every(isSessionLike)) return describeSessions(result);
  if (result === null || typeof result !== "object") return null;
  const body = result as Record<string, unknown>;
  const sessionId = typeof args.sessionId === "string" ? args.sessionId : undefined;
  if (typeof body.delivered === "boolean" && sessionId) {
    return body.delivered
      ? `Delivered to session ${sessionId} (attempt ${body.attempts}). Next: call get_status (sessionId "${sessionId}") to see whether it works, waits for a permission or a question, or is done; get_transcript reads its replies.`
      : `Not delivered to session ${sessionId} after ${body.attempts} attempts. Next: call get_status or capture_pane to see why.`;
  }
  if (Array.isArray(body.created) && Array.isArray(body.failed)) {
    const created = body.created.filter(isSessionLike);
    return [
      `${created.length} created, ${body.failed.length} failed.`,
      ...created.map((s) => `- ${describeSession(s)}`),
    ].join("\n");
  }
  if (Array.isArray(body.hints) && typeof body.id === "string" && typeof body.status === "string") {
    return `Session ${body.id} is ${body.status}${body.alive === false ? " (its agent process is not running)" : ""}. ${body.hints.join(" ")}`;
  }
  return null;
}
