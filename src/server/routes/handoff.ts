import { Elysia } from "elysia";
import { principalOf } from "../../auth/principal.ts";
import { HandoffAnswer, HandoffBody, type HandoffService } from "../../handoff/index.ts";
import { IdParams } from "./params.ts";

/** Hand a session's task to another agent in the same folder (docs/budgets.md, Handoff). */
export function handoffRoutes(handoffs: HandoffService) {
  return new Elysia({ name: "routes/handoff" }).post(
    "/v1/sessions/:id/handoff",
    async ({ params, body, request, status }) => {
      const result = await handoffs.handoff(params.id, body, principalOf(request));
      const { to } = result;
      return status(201, {
        from: result.from,
        to: {
          ...to.session,
          reused: to.reused,
          promptDelivery: to.promptDelivery && {
            delivered: to.promptDelivery.delivered,
            attempts: to.promptDelivery.attempts,
            ...(!to.promptDelivery.delivered && to.promptDelivery.reason
              ? { reason: to.promptDelivery.reason }
              : {}),
          },
          ...(to.warnings.length ? { warnings: to.warnings } : {}),
        },
        brief: result.brief,
      });
    },
    {
      params: IdParams,
      body: HandoffBody,
      response: { 201: HandoffAnswer },
      detail: {
        summary: "Hand the session's task to a new session of another agent in the same folder",
        description:
          "The new session's first prompt is a brief: the task as first asked, a digest, the last turns whole, the files changed since the session began, what it was left waiting on, and the note. The two sessions link each other (handedOffTo, handedOffFrom); session.handoff says so on every channel.",
        tags: ["sessions"],
      },
    },
  );
}
