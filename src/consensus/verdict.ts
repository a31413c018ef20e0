import type { Consensus, CriterionVerdict, Reviewer } from "./consensus.ts";

/**
 * The verdict of a review: the majority of the reviewers whose answer was read (a reviewer that
 * timed out, failed or could not be read does not count either way); a tie is `split`.
 * `agreement` is the share of the counted reviewers on the verdict's side (a split: one half).
 * Each criterion is judged the same way from the reviewers' PASS and FAIL.
 */
export interface Tally {
  verdict: Consensus["verdict"];
  agreement: number | null;
  counted: number;
  criteriaVerdicts: CriterionVerdict[];
}

export function tally(criteria: readonly string[], reviewers: readonly Reviewer[]): Tally {
  const read = reviewers.filter((r) => r.status === "done" && r.verdict !== null);
  if (read.length === 0) return { verdict: null, agreement: null, counted: 0, criteriaVerdicts: [] };
  const approve = read.filter((r) => r.verdict === "approve").length;
  const overall = majority(approve, read.length - approve);
  return {
    verdict: overall.side === "yes" ? "approve" : overall.side === "no" ? "reject" : "split",
    agreement: overall.agreement,
    counted: read.length,
    criteriaVerdicts: criteria.map((criterion, i) => {
      const pass = read.filter((r) => r.criteria[i]?.pass === true).length;
      const fail = read.filter((r) => r.criteria[i]?.pass === false).length;
      const m = majority(pass, fail);
      return {
        criterion,
        verdict: m.side === "yes" ? "pass" : m.side === "no" ? "fail" : "split",
        pass,
        fail,
        agreement: m.agreement,
      };
    }),
  };
}

function majority(yes: number, no: number): { side: "yes" | "no" | "tie"; agreement: number } {
  const total = yes + no;
  if (total === 0) return { side: "tie", agreement: 0 };
  const side = yes > no ? "yes" : no > yes ? "no" : "tie";
  return { side, agreement: round(Math.max(yes, no) / total) };
}

/** Four decimals: 2 of 3 is 0.6667, not 0.6666666666666666. */
function round(share: number): number {
  return Math.round(share * 10_000) / 10_000;
}

/** How many reviewers approved and how many rejected (those whose answer was read). */
export function votes(reviewers: readonly Reviewer[]): { approve: number; reject: number } {
  return {
    approve: reviewers.filter((r) => r.verdict === "approve").length,
    reject: reviewers.filter((r) => r.verdict === "reject").length,
  };
}
