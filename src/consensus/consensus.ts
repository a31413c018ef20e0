import { type Static, Type } from "@sinclair/typebox";
import type { DriverName } from "../agents/agent.ts";
import { NO_TOKENS, TokenCounts } from "../agents/vocabulary.ts";
import { Driver } from "../sessions/index.ts";
import { literalUnion } from "../shared/schema.ts";
import {
  CONSENSUS_STATUSES,
  DEFAULT_REVIEWERS,
  MAX_CRITERIA,
  MAX_REVIEWERS,
  MIN_REVIEWERS,
  REVIEWER_STATUSES,
} from "./limits.ts";

/** CONTRACT §7's consensus record, and what ag adds to it (the change reviewed, costs, timings). */

export * from "./limits.ts";

export const CriterionAssessment = Type.Object({
  criterion: Type.String(),
  pass: Type.Boolean(),
  note: Type.String({ description: "the reviewer's one-line reason" }),
});
export type CriterionAssessment = Static<typeof CriterionAssessment>;

export const Reviewer = Type.Object({
  index: Type.Integer({ minimum: 1, description: "1-based" }),
  agent: Type.String({ description: "the agent CLI this reviewer runs (GET /v1/agents)" }),
  driver: Type.Optional(Driver),
  sessionId: Type.Union([Type.String(), Type.Null()], { description: "its read-only session" }),
  status: literalUnion(REVIEWER_STATUSES),
  verdict: Type.Union([Type.Literal("approve"), Type.Literal("reject"), Type.Null()], {
    description: "null unless the answer was read (status done)",
  }),
  criteria: Type.Array(CriterionAssessment),
  restated: Type.Boolean({ description: "its first answer could not be read, and it was asked to restate" }),
  answer: Type.Union([Type.String(), Type.Null()], {
    description: "its last answer as written (cut to 8000 characters)",
  }),
  error: Type.Optional(Type.String({ description: "why it could not be read, timed out or failed" })),
  tokens: TokenCounts,
  costUsd: Type.Number({ description: "estimate from the price table" }),
  startedAt: Type.Union([Type.String(), Type.Null()]),
  finishedAt: Type.Union([Type.String(), Type.Null()]),
});
export type Reviewer = Static<typeof Reviewer>;

/** A reviewer not started yet. */
export function newReviewer(index: number, agent: string, driver?: DriverName): Reviewer {
  return {
    index,
    agent,
    ...(driver ? { driver } : {}),
    sessionId: null,
    status: "pending",
    verdict: null,
    criteria: [],
    restated: false,
    answer: null,
    tokens: { ...NO_TOKENS },
    costUsd: 0,
    startedAt: null,
    finishedAt: null,
  };
}

export const CriterionVerdict = Type.Object({
  criterion: Type.String(),
  verdict: Type.Union([Type.Literal("pass"), Type.Literal("fail"), Type.Literal("split")]),
  pass: Type.Integer({ description: "reviewers who passed it" }),
  fail: Type.Integer({ description: "reviewers who failed it" }),
  agreement: Type.Number({ description: "share of the counted reviewers on the majority side" }),
});
export type CriterionVerdict = Static<typeof CriterionVerdict>;

export const ReviewedChange = Type.Object({
  kind: Type.Union([Type.Literal("git"), Type.Literal("files"), Type.Literal("none")], {
    description: "git: a diff against the session's start commit; files: the files its transcript wrote",
  }),
  base: Type.Union([Type.String(), Type.Null()], { description: "git: the commit diffed against" }),
  files: Type.Array(Type.String(), { description: "the files changed" }),
  bytes: Type.Integer({ description: "size of the change as given to the reviewers" }),
  truncated: Type.Boolean({ description: "the change was cut to fit the brief" }),
});
export type ReviewedChange = Static<typeof ReviewedChange>;

export const Consensus = Type.Object({
  id: Type.String(),
  sessionId: Type.String({ description: "the session whose work is reviewed" }),
  criteria: Type.Array(Type.String()),
  status: literalUnion(CONSENSUS_STATUSES),
  reviewers: Type.Array(Reviewer),
  verdict: Type.Union([Type.Literal("approve"), Type.Literal("reject"), Type.Literal("split"), Type.Null()], {
    description: "the majority of the reviewers' verdicts; split on a tie; null until completed",
  }),
  agreement: Type.Union([Type.Number(), Type.Null()], {
    description: "share of the counted reviewers (those whose answer was read) agreeing with the verdict",
  }),
  counted: Type.Integer({ description: "reviewers whose answer was read" }),
  criteriaVerdicts: Type.Array(CriterionVerdict),
  change: Type.Union([ReviewedChange, Type.Null()]),
  tokens: TokenCounts,
  costUsd: Type.Number({ description: "the reviewers' cost summed (estimate from the price table)" }),
  requestedBy: Type.String({ description: "who asked (the caller's key or token)" }),
  error: Type.Optional(Type.String({ description: "why the run failed" })),
  createdAt: Type.String({ format: "date-time" }),
  updatedAt: Type.String({ format: "date-time" }),
  finishedAt: Type.Union([Type.String({ format: "date-time" }), Type.Null()]),
});
export type Consensus = Static<typeof Consensus>;

export const StartConsensusInput = Type.Object(
  {
    criteria: Type.Array(Type.String({ minLength: 1, maxLength: 1000 }), {
      minItems: 1,
      maxItems: MAX_CRITERIA,
      description: "what each reviewer judges, PASS or FAIL",
    }),
    reviewers: Type.Optional(
      Type.Integer({
        minimum: MIN_REVIEWERS,
        maximum: MAX_REVIEWERS,
        default: DEFAULT_REVIEWERS,
        description: "how many independent reviewers (default 3)",
      }),
    ),
    agent: Type.Optional(
      Type.String({
        pattern: "^[a-z][a-z0-9-]{0,31}$",
        description: "the agent CLI the reviewers run (GET /v1/agents); default the reviewed session's",
      }),
    ),
    driver: Type.Optional(Driver),
  },
  { additionalProperties: false },
);
export type StartConsensusInput = Static<typeof StartConsensusInput>;

export const ConsensusListQuery = Type.Object(
  { sessionId: Type.Optional(Type.String({ minLength: 1, description: "only reviews of this session" })) },
  { additionalProperties: false },
);
