import { type Static, Type } from "@sinclair/typebox";
import { literalUnion } from "../shared/schema.ts";

/** SPEC "Verification protocol" and CONTRACT §7: what a verification answers. */

export const STEP_NAMES = ["tsc", "build", "test"] as const;
export type StepName = (typeof STEP_NAMES)[number];

export const VerificationStep = Type.Object({
  name: literalUnion(STEP_NAMES),
  command: Type.String({ description: "the command as run in the session's workDir" }),
  ok: Type.Boolean({ description: "true when it passed or was skipped" }),
  skipped: Type.Boolean(),
  reason: Type.Optional(Type.String({ description: "why it was skipped, timed out or could not run" })),
  exitCode: Type.Union([Type.Integer(), Type.Null()], {
    description: "null when skipped, or when the process ended by a signal (timeout)",
  }),
  durationMs: Type.Integer({ minimum: 0 }),
  output: Type.String({ description: "the last 4000 characters of stdout and stderr together" }),
});
export type VerificationStep = Static<typeof VerificationStep>;

export const VerificationResult = Type.Object({
  ok: Type.Boolean({ description: "every step passed or was skipped, and package.json was there" }),
  steps: Type.Array(VerificationStep),
  totalDurationMs: Type.Integer({ minimum: 0 }),
  summary: Type.String({ description: "e.g. Verification passed: tsc ✅, build ✅, test ✅ (812ms)" }),
});
export type VerificationResult = Static<typeof VerificationResult>;

export const VerifyInput = Type.Object(
  {
    criticalOnly: Type.Optional(
      Type.Boolean({ description: "skip the test step; default: verificationProtocol.criticalOnly" }),
    ),
  },
  { additionalProperties: false },
);
export type VerifyInput = Static<typeof VerifyInput>;
