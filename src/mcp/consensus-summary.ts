import type { Consensus, Reviewer } from "../consensus/consensus.ts";
import { describeOutcome, percent, reviewerWhy } from "../consensus/describe.ts";

/**
 * The plain-language summary of a consensus review (start_consensus, get_consensus), read before
 * the JSON: the verdict and agreement, a line per criterion, a line per reviewer, and the tool to
 * call next. Built from the record alone, so it never says more than the JSON does.
 */

/** The fields of a review the summary reads; any REST body shaped like a review record fits. */
export type ConsensusLike = Pick<
  Consensus,
  | "id"
  | "sessionId"
  | "status"
  | "criteria"
  | "reviewers"
  | "verdict"
  | "agreement"
  | "counted"
  | "criteriaVerdicts"
  | "costUsd"
  | "error"
>;

export function isConsensusLike(value: unknown): value is ConsensusLike {
  if (value === null || typeof value !== "object" || Array.isArray(value)) return false;
  const v = value as Record<string, unknown>;
  return (
    typeof v.id === "string" &&
    typeof v.sessionId === "string" &&
    typeof v.status === "string" &&
    Array.isArray(v.criteria) &&
    Array.isArray(v.reviewers) &&
    Array.isArray(v.criteriaVerdicts)
  );
}

function reviewerLine(r: Reviewer): string {
  const what = r.status === "done" ? (r.verdict ?? "done") : r.status;
  const restated = r.restated ? " (asked to restate)" : "";
  const why = reviewerWhy(r);
  return `- Reviewer ${r.index}: ${what}${restated}${why ? ` — ${why}` : ""}`;
}

export function describeConsensus(review: ConsensusLike): string {
  const head = `Consensus review ${review.id} of session ${review.sessionId}`;
  const n = review.reviewers.length;
  const lines: string[] = [];
  if (review.status === "running") {
    const answered = review.reviewers.filter((r) => r.finishedAt !== null).length;
    lines.push(
      `${head} is running: ${answered} of ${n} reviewers finished, ${review.criteria.length} criteria.`,
    );
  } else if (review.status === "failed") {
    lines.push(`${head} failed: ${review.error ?? "no verdict"}.`);
  } else {
    const agreement = review.agreement === null ? "" : ` (agreement ${percent(review.agreement)})`;
    lines.push(`${head}: ${describeOutcome(review)}${agreement}.`);
  }
  if (review.criteriaVerdicts.length > 0) {
    lines.push("Criteria:");
    review.criteriaVerdicts.forEach((c, i) => {
      lines.push(`- ${i + 1}. "${c.criterion}": ${c.verdict} (${c.pass} pass, ${c.fail} fail)`);
    });
  }
  lines.push("Reviewers:", ...review.reviewers.map((r) => reviewerLine(r as Reviewer)));
  if (review.status !== "running") lines.push(`Cost: $${Number(review.costUsd.toFixed(4))} (estimate).`);
  const next = nextStep(review);
  if (next) lines.push(`Next: ${next}`);
  return lines.join("\n");
}

function nextStep(review: ConsensusLike): string | null {
  const again = `start_consensus (sessionId "${review.sessionId}")`;
  if (review.status === "running")
    return `call get_consensus (consensusId "${review.id}") again later: a review lasts as long as its slowest reviewer.`;
  if (review.status === "failed") return `the reviewers' errors say why; call ${again} to try again.`;
  if (review.verdict === "reject")
    return `call send_message (sessionId "${review.sessionId}") with the failed criteria and the reviewers' notes, then ${again} again.`;
  if (review.verdict === "split")
    return `read the reviewers' notes and decide, or call ${again} again with an odd number of reviewers.`;
  return null;
}
