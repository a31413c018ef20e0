/** How numbers and times read on the page. */
import { REVIEWER_ENDS } from "../../src/consensus/limits.ts";
import { DRIVER_TRAITS } from "../../src/drivers/traits.ts";
import type { Consensus, Session } from "./types.ts";

export function formatDuration(ms: number): string {
  const s = Math.max(0, Math.floor(ms / 1000));
  const d = Math.floor(s / 86_400);
  const h = Math.floor((s % 86_400) / 3600);
  const m = Math.floor((s % 3600) / 60);
  if (d) return `${d}d ${h}h`;
  if (h) return `${h}h ${m}m`;
  return m ? `${m}m ${s % 60}s` : `${s % 60}s`;
}

export const age = (iso: string, now = Date.now()) => formatDuration(now - Date.parse(iso));

/** "claude · default", and "· headless (ACP)" for a session without a terminal. */
export function agentMode(s: Pick<Session, "agent" | "permissionMode" | "driver">): string {
  return `${s.agent} · ${s.permissionMode}${DRIVER_TRAITS[s.driver].terminal ? "" : " · headless (ACP)"}`;
}

export function formatTokens(n: number): string {
  if (n >= 1_000_000) return `${(n / 1_000_000).toFixed(1)}M`;
  if (n >= 10_000) return `${Math.round(n / 1000)}k`;
  if (n >= 1000) return `${(n / 1000).toFixed(1)}k`;
  return String(n);
}

export const totalTokens = (t: Session["tokenUsage"]) => t.input + t.output + t.cacheRead + t.cacheCreation;

export function formatCost(usd: number | undefined): string {
  if (usd === undefined) return "–";
  return usd < 0.01 && usd > 0 ? "<$0.01" : `$${usd.toFixed(2)}`;
}

/** Resident memory as the list shows it: "312 MB", "1.4 GB"; "–" when not measured. */
export function formatMemory(bytes: number | undefined): string {
  if (bytes === undefined) return "–";
  const mb = bytes / (1024 * 1024);
  return mb >= 1024 ? `${(mb / 1024).toFixed(1)} GB` : `${Math.round(mb)} MB`;
}

/** A share of one core: "0.4%", "37%", "180%" (a tree can use more than one core); "–" unknown. */
export function formatCpu(percent: number | null | undefined): string {
  if (percent === null || percent === undefined) return "–";
  if (percent === 0) return "0%";
  return percent < 10 ? `${percent.toFixed(1)}%` : `${Math.round(percent)}%`;
}

/** The states in which the agent waits for a person. */
export const waitsForHuman = (s: Pick<Session, "status">) =>
  s.status === "permission_prompt" || s.status === "asking";

export const STATE_WORDS: Record<Session["status"], string> = {
  working: "working",
  idle: "idle",
  permission_prompt: "needs approval",
  asking: "asking",
  stalled: "stalled",
  killed: "killed",
  completed: "completed",
  crashed: "crashed",
};

/** What a pending prompt asks, in one line. */
export function pendingSummary(s: Session): string {
  const p = s.pendingPermission;
  if (!p) return "";
  if (p.kind === "question") return p.question ?? p.detail;
  if (p.kind === "plan") return "Approve the plan?";
  return p.tool ? `${p.tool}: ${p.detail}` : p.detail;
}

/** A share as a whole percent: 0.6667 → "67%". */
export const percent = (share: number) => `${Math.round(share * 100)}%`;

/** What a review's outcome line reads from its record. */
export type Outcome = Pick<Consensus, "status" | "verdict" | "agreement" | "counted" | "reviewers" | "error">;

/**
 * A review's outcome in one line: "APPROVE — 2 of 3 agree (67%)", "SPLIT — 1 approve, 1 reject",
 * "RUNNING — 1 of 3 reviewers finished", "FAILED — <why>". Reviewers whose answer was not read
 * are named apart: they are not part of the agreement.
 */
export function consensusSummary(c: Outcome): string {
  const n = c.reviewers.length;
  if (c.status === "running") {
    const finished = c.reviewers.filter((r) => REVIEWER_ENDS.includes(r.status)).length;
    return `RUNNING — ${finished} of ${n} reviewers finished`;
  }
  if (c.status === "failed" || c.verdict === null) return `FAILED — ${c.error ?? "no verdict"}`;
  const unread = n - c.counted;
  const rest = unread ? `; ${unread} not counted` : "";
  const approve = c.reviewers.filter((r) => r.verdict === "approve").length;
  const reject = c.reviewers.filter((r) => r.verdict === "reject").length;
  if (c.verdict === "split") return `SPLIT — ${approve} approve, ${reject} reject${rest}`;
  const agreeing = c.verdict === "approve" ? approve : reject;
  const share = c.agreement ?? agreeing / c.counted;
  return `${c.verdict.toUpperCase()} — ${agreeing} of ${c.counted} agree (${percent(share)})${rest}`;
}

export const REVIEWER_WORDS: Record<Consensus["reviewers"][number]["status"], string> = {
  pending: "pending",
  starting: "starting",
  reviewing: "reviewing",
  restating: "asked to restate",
  done: "done",
  unparsable: "unreadable",
  timed_out: "timed out",
  failed: "failed",
};
