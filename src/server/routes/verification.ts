import { Type } from "@sinclair/typebox";
import { Elysia } from "elysia";
import { VerificationResult, type VerificationService, VerifyInput } from "../../verify/index.ts";
import { IdParams } from "./params.ts";

/** Type check, build and test a session's workDir: always 200, with `ok` saying how it went. */
export function verificationRoutes(verification: VerificationService) {
  return new Elysia({ name: "routes/verification" }).post(
    "/v1/sessions/:id/verify",
    ({ params, body }) => verification.verify(params.id, { criticalOnly: body?.criticalOnly }),
    {
      params: IdParams,
      body: Type.Optional(VerifyInput),
      response: VerificationResult,
      detail: {
        summary:
          "Run tsc --noEmit, npm run build and npm test in the session's workDir; always 200 with ok (also sent as the verification event)",
      },
    },
  );
}
