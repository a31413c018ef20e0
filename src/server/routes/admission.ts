import { Type } from "@sinclair/typebox";
import { Elysia, t } from "elysia";
import type { HostGuard } from "../../host/index.ts";

/**
 * GET /v1/admission: the memory check's figures and the creates waiting for room, in order. Its
 * numbers are TypeBox integers: Elysia's `t.Integer` is a string-or-integer made to decode a query
 * string, and in an answer it documented (and let through) `string | number`.
 */
export function admissionRoutes(admission: Pick<HostGuard, "state">) {
  return new Elysia({ name: "routes/admission" }).get("/v1/admission", () => admission.state(), {
    response: t.Object({
      reserveMb: Type.Integer({
        description: "kept free for the rest of the machine (memoryReserveMb; 0: off)",
      }),
      availableMb: t.Union([Type.Integer(), t.Null()], { description: "what the host can still give" }),
      expectedMb: t.Record(t.String(), Type.Integer(), {
        description: "what one more agent of each kind measured so far is expected to take",
      }),
      starting: t.Array(
        t.Object({
          agent: t.String(),
          sessionId: t.Union([t.String(), t.Null()], { description: "null until its record exists" }),
          heldMb: t.Integer({ description: "what it is expected to take, less what it takes already" }),
        }),
        {
          description:
            "launches whose agent has not started yet: each holds room until its agent shows its prompt box, a dialog, or ends",
        },
      ),
      waiting: t.Array(
        t.Object({
          agent: t.String(),
          for: t.String({ description: "batch, pipeline:<id>, consensus:<id>" }),
          since: t.String({ format: "date-time" }),
        }),
        { description: "creates waiting for memory, first served first" },
      ),
    }),
    detail: {
      summary: "Admission by memory: the reserve, the headroom and the creates waiting for room",
      tags: ["sessions"],
    },
  });
}
