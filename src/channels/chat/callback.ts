import { createHash } from "node:crypto";

/**
 * The data of an Approve / Reject button, or of a question's option. The API allows 1–64 bytes,
 * so it is compact: `a|r|<option>:<session id, 32 hex>:<permission id>:<fingerprint>`. It carries everything needed to
 * answer, so buttons keep working after a restart with no table to look up; the fingerprint (of
 * the prompt's kind, tool and detail) stops an old button from answering a newer prompt that
 * happens to reuse a permission id (ids restart at perm-1 when a session is re-adopted).
 */
export const MAX_CALLBACK_BYTES = 64;

export interface PromptRef {
  kind: string;
  tool?: string;
  detail: string;
}

/** Approve, reject, or pick the question's option N (1-based). */
export type Choice = "approve" | "reject" | number;

export interface PromptAnswer {
  choice: Choice;
  sessionId: string;
  permissionId: string;
  fingerprint: string;
}

export function promptFingerprint(prompt: PromptRef): string {
  return createHash("sha256")
    .update(`${prompt.kind}\n${prompt.tool ?? ""}\n${prompt.detail}`)
    .digest("base64url")
    .slice(0, 8);
}

/** The button's data, or null when it would not fit (the prompt is then shown without buttons). */
export function encodeAnswer(
  choice: Choice,
  sessionId: string,
  permissionId: string,
  prompt: PromptRef,
): string | null {
  const compact = sessionId.replaceAll("-", "").toLowerCase();
  if (!/^[0-9a-f]{32}$/.test(compact) || permissionId.includes(":")) return null;
  const what = choice === "approve" ? "a" : choice === "reject" ? "r" : String(choice);
  const data = `${what}:${compact}:${permissionId}:${promptFingerprint(prompt)}`;
  return Buffer.byteLength(data) <= MAX_CALLBACK_BYTES ? data : null;
}

export function decodeAnswer(data: string): PromptAnswer | null {
  const match = /^([ar]|[1-9]\d?):([0-9a-f]{32}):([^:]+):([A-Za-z0-9_-]+)$/.exec(data);
  if (!match) return null;
  const hex = match[2]!;
  const sessionId = `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
  const what = match[1]!;
  const choice: Choice = what === "a" ? "approve" : what === "r" ? "reject" : Number(what);
  return { choice, sessionId, permissionId: match[3]!, fingerprint: match[4]! };
}

/** A budget button: raise the budget that paused the session by `cents`, or stop here. */
export type BudgetButton =
  | { action: "raise"; sessionId: string; cents: number }
  | { action: "stop"; sessionId: string };

/** `b+:<session id, 32 hex>:<cents>` or `bs:<session id>`; null when the id is not a uuid. */
export function encodeBudgetButton(button: BudgetButton): string | null {
  const compact = button.sessionId.replaceAll("-", "").toLowerCase();
  if (!/^[0-9a-f]{32}$/.test(compact)) return null;
  return button.action === "raise" ? `b+:${compact}:${button.cents}` : `bs:${compact}`;
}

export function decodeBudgetButton(data: string): BudgetButton | null {
  const match = /^b([+s]):([0-9a-f]{32})(?::([1-9]\d{0,9}))?$/.exec(data);
  if (!match) return null;
  const hex = match[2]!;
  const sessionId = `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
  if (match[1] === "s") return match[3] === undefined ? { action: "stop", sessionId } : null;
  return match[3] === undefined ? null : { action: "raise", sessionId, cents: Number(match[3]) };
}
