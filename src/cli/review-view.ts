import type { Consensus, ReviewedChange } from "../consensus/consensus.ts";
import { describeOutcome, percent, reviewerWhy } from "../consensus/describe.ts";
import { type Colour, formatTable, paint, plural } from "./output.ts";
import { clip, formatUsd, oneLine } from "./views.ts";

/**
 * How a consensus review reads in a terminal (`ag review`): the outcome, what was reviewed, a
 * table of the criteria and a line per reviewer. Pure: the command prints the result.
 */

const OUTCOME_COLOUR: Record<string, Colour> = {
  approve: "green",
  reject: "red",
  split: "yellow",
  failed: "red",
  running: "cyan",
};

const CRITERION_COLOUR: Record<string, Colour> = { pass: "green", fail: "red", split: "yellow" };

/** The review's short handle, as `ag review --show` takes it. */
export function reviewHandle(review: { id: string }): string {
  return review.id.slice(0, 8);
}

/** `approve: 2 of 3 reviewers agree · agreement 67%`, coloured by the verdict. */
export function outcomeLine(review: Consensus, colour: boolean): string {
  const key = review.status === "completed" ? (review.verdict ?? "failed") : review.status;
  const line =
    review.status === "running"
      ? `running: ${plural(finished(review), "reviewer")} of ${review.reviewers.length} finished`
      : describeOutcome(review);
  const agreement = review.agreement === null ? "" : ` · agreement ${percent(review.agreement)}`;
  return paint(`${line}${agreement}`, OUTCOME_COLOUR[key], colour);
}

function finished(review: Consensus): number {
  return review.reviewers.filter((r) => r.finishedAt !== null).length;
}

/** What the reviewers were given of the change, in a phrase. */
export function changeSummary(change: ReviewedChange | null): string {
  if (!change || change.kind === "none") return "none found: no diff, no file the session wrote";
  const files = plural(change.files.length, "file");
  const cut = change.truncated ? ", cut to fit the brief" : "";
  if (change.kind === "git")
    return `git diff${change.base ? ` against ${change.base.slice(0, 12)}` : ""}: ${files}${cut}`;
  return `${files} the session wrote${cut}`;
}

/** The whole review: outcome, fields, the criteria table, the reviewers table. */
export function reviewLines(review: Consensus, options: { colour: boolean; sessionName?: string }): string[] {
  const { colour } = options;
  const session = options.sessionName
    ? `${options.sessionName} (${review.sessionId.slice(0, 8)})`
    : review.sessionId;
  const fields: Array<[string, string]> = [
    ["review", review.id],
    ["session", session],
    ["change", changeSummary(review.change)],
    [
      "reviewers",
      `${review.reviewers.length}${review.status === "running" ? "" : `, ${review.counted} counted`} · ${formatUsd(review.costUsd)}`,
    ],
  ];
  const width = Math.max(...fields.map(([label]) => label.length));
  const verdicts = new Map(review.criteriaVerdicts.map((c, i) => [i, c]));
  const criteria = formatTable(
    ["#", "VERDICT", "PASS", "FAIL", "AGREEMENT", "CRITERION"],
    review.criteria.map((criterion, i) => {
      const v = verdicts.get(i);
      return [
        String(i + 1),
        v ? paint(v.verdict, CRITERION_COLOUR[v.verdict], colour) : "-",
        v ? String(v.pass) : "-",
        v ? String(v.fail) : "-",
        v && v.pass + v.fail > 0 ? percent(v.agreement) : "-",
        clip(oneLine(criterion), 100),
      ];
    }),
  );
  const reviewers = formatTable(
    ["REVIEWER", "STATUS", "VERDICT", "COST", "WHY"],
    review.reviewers.map((r) => [
      String(r.index),
      r.restated ? `${r.status} (restated)` : r.status,
      r.verdict ? paint(r.verdict, r.verdict === "approve" ? "green" : "red", colour) : "-",
      r.finishedAt === null ? "-" : formatUsd(r.costUsd),
      clip(oneLine(reviewerWhy(r)), 160),
    ]),
  );
  return [
    outcomeLine(review, colour),
    ...fields.map(([label, value]) => `  ${label.padEnd(width)}  ${value}`),
    "",
    ...criteria,
    "",
    ...reviewers,
  ];
}
