import type { Consensus, Reviewer } from "./consensus.ts";
import { votes } from "./verdict.ts";

/**
 * How a review reads in words, the same wherever it is shown: the event's detail, `ag review`,
 * the MCP tools' summary. Pure, and imports nothing at run time but verdict.ts.
 */

/**
 * One line: the verdict and who agreed, or why there is none (`approve: 2 of 3 reviewers agree`,
 * `split: 1 approve, 1 reject, 1 not counted (…)`, `review failed: …`).
 */
export function describeOutcome(
  record: Pick<Consensus, "status" | "verdict" | "counted" | "reviewers" | "error">,
): string {
  const { approve, reject } = votes(record.reviewers);
  const unread = record.reviewers.length - record.counted;
  const rest = unread ? `, ${unread} not counted (unreadable, timed out or failed)` : "";
  if (record.status === "failed") return `review failed: ${record.error ?? "no verdict"}`;
  if (record.status === "running") return "running: no verdict yet";
  if (record.verdict === "split") return `split: ${approve} approve, ${reject} reject${rest}`;
  const agreeing = record.verdict === "approve" ? approve : reject;
  return `${record.verdict}: ${agreeing} of ${record.counted} reviewers agree${rest}`;
}

/** A share as a whole percentage: 0.6667 → "67%". */
export function percent(share: number): string {
  return `${Math.round(share * 100)}%`;
}

/** A reviewer's notes on the criteria it failed: `FAIL 2: the diff touches config.ts`. */
export function failedNotes(reviewer: Pick<Reviewer, "criteria">, max = 200): string[] {
  return reviewer.criteria.flatMap((c, i) => {
    if (c.pass) return [];
    const note = c.note.length > max ? `${c.note.slice(0, max - 1)}…` : c.note;
    return [`FAIL ${i + 1}${note ? `: ${note}` : ""}`];
  });
}

/** Why a reviewer counted or not, in a phrase: its failed criteria, or its error. */
export function reviewerWhy(reviewer: Pick<Reviewer, "status" | "criteria" | "error">): string {
  return reviewer.status === "done" ? failedNotes(reviewer).join("; ") : (reviewer.error ?? "");
}
