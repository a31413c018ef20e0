import { Type } from "@sinclair/typebox";
import { Elysia, t } from "elysia";
import { principalOf } from "../../auth/principal.ts";
import {
  CheckpointDiff,
  CheckpointList,
  RewindInput,
  RewindResult,
  type SessionCheckpoints,
} from "../../checkpoints/index.ts";
import type { SessionService } from "../../sessions/index.ts";
import { IdParams } from "./params.ts";

/** A turn in a path: digits only (a turn is a whole number from 0). */
const TurnParams = t.Object({
  id: t.String(),
  turn: t.Numeric({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER, multipleOf: 1 }),
});

/** A session's checkpoints: each turn's changes, its diff, and rewinding to one (docs/checkpoints.md). */
export function checkpointRoutes(sessions: SessionService, checkpoints: SessionCheckpoints) {
  return new Elysia({ name: "routes/checkpoints" })
    .get("/v1/sessions/:id/checkpoints", ({ params }) => checkpoints.list(sessions.get(params.id)), {
      params: IdParams,
      response: CheckpointList,
      detail: { summary: "A session's checkpoints: per turn its prompt, time, files changed, lines +/-" },
    })
    .get(
      "/v1/sessions/:id/checkpoints/:turn/diff",
      ({ params }) => checkpoints.diff(sessions.get(params.id), params.turn),
      {
        params: TurnParams,
        response: CheckpointDiff,
        detail: { summary: "What turn n changed in the session's folder, as a unified diff" },
      },
    )
    .get(
      "/v1/sessions/:id/checkpoints/:turn/rewind-diff",
      async ({ params }) => ({
        turn: params.turn,
        patch: await checkpoints.pending(sessions.get(params.id), params.turn),
      }),
      {
        params: TurnParams,
        response: Type.Object({
          turn: Type.Integer({ minimum: 0 }),
          patch: Type.String({
            description: "from the folder as it is now to the checkpoint: what a rewind undoes",
          }),
        }),
        detail: { summary: "The diff a code rewind to turn n would undo (shown before confirming one)" },
      },
    )
    .post(
      "/v1/sessions/:id/rewind",
      ({ params, body, request }) =>
        checkpoints.rewind(sessions.get(params.id), body, (turns) =>
          sessions.forkAt(params.id, turns, principalOf(request)),
        ),
      {
        params: IdParams,
        body: RewindInput,
        response: RewindResult,
        detail: {
          summary:
            "Rewind the folder (code), the conversation (a new session forked at the turn) or both to turn n; {undo: true} takes back the last code rewind",
        },
      },
    );
}
