/**
 * The plain values of consensus review, apart from its schemas: the dashboard bundle imports
 * this module as it is (no TypeBox, nothing else).
 */

export const CONSENSUS_STATUSES = ["running", "completed", "failed"] as const;
export type ConsensusStatus = (typeof CONSENSUS_STATUSES)[number];

/**
 * A reviewer's course: `starting` (its session is opening, the brief not yet taken), `reviewing`,
 * `restating` (its first answer could not be read; asked once to restate), then one of the ends.
 */
export const REVIEWER_STATUSES = [
  "pending",
  "starting",
  "reviewing",
  "restating",
  "done",
  "unparsable",
  "timed_out",
  "failed",
] as const;
export type ReviewerStatus = (typeof REVIEWER_STATUSES)[number];
export const REVIEWER_ENDS: readonly ReviewerStatus[] = ["done", "unparsable", "timed_out", "failed"];

export const MIN_REVIEWERS = 1;
export const MAX_REVIEWERS = 7;
export const DEFAULT_REVIEWERS = 3;
export const MAX_CRITERIA = 20;

/** `managedBy` of a reviewer's session: the review that runs it. */
export const REVIEWER_OF = "consensus:";
export const reviewerManager = (consensusId: string) => `${REVIEWER_OF}${consensusId}`;
