import { Type } from "@sinclair/typebox";
import { Elysia } from "elysia";
import { principalOf } from "../../auth/principal.ts";
import {
  Consensus,
  ConsensusListQuery,
  type ConsensusService,
  StartConsensusInput,
} from "../../consensus/index.ts";
import { IdParams } from "./params.ts";

const tags = ["consensus"];

/** Consensus review: independent read-only reviewers judge a session's work; the majority decides. */
export function consensusRoutes(consensus: ConsensusService) {
  return new Elysia({ name: "routes/consensus" })
    .post(
      "/v1/sessions/:id/consensus",
      async ({ params, body, request, status }) =>
        status(202, await consensus.start(params.id, body, principalOf(request).actor)),
      {
        params: IdParams,
        body: StartConsensusInput,
        response: { 202: Consensus },
        detail: {
          summary:
            "Start a consensus review of the session's work: 1–7 read-only reviewers, each answering PASS/FAIL per criterion and a verdict",
          tags,
        },
      },
    )
    .get("/v1/consensus", ({ query, request }) => consensus.list(query.sessionId, principalOf(request)), {
      query: ConsensusListQuery,
      response: Type.Array(Consensus),
      detail: { summary: "Consensus reviews, newest first", tags },
    })
    .get("/v1/consensus/:id", ({ params, request }) => consensus.get(params.id, principalOf(request)), {
      params: IdParams,
      response: Consensus,
      detail: {
        summary: "A consensus review: each reviewer's assessment and the verdict",
        tags,
      },
    });
}
