import { type Static, Type } from "@sinclair/typebox";

/** SPEC "Verification protocol" and CONTRACT §7: what a verification answers. */

// A result is also what the `verification` event carries: the event catalog defines it.
export {
  STEP_NAMES,
  type StepName,
  VerificationResult,
  VerificationStep,
} from "../events/names.ts";

export const VerifyInput = Type.Object(
  {
    criticalOnly: Type.Optional(
      Type.Boolean({ description: "skip the test step; default: verificationProtocol.criticalOnly" }),
    ),
  },
  { additionalProperties: false },
);
export type VerifyInput = Static<typeof VerifyInput>;
