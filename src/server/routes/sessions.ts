import { Type } from "@sinclair/typebox";
import { Elysia, t } from "elysia";
import { principalOf } from "../../auth/principal.ts";
import {
  BatchCreated,
  BatchCreateInput,
  BatchKilled,
  BatchKillInput,
  CreatedSession,
  type CreateResult,
  CreateSessionInput,
  Delivery,
  type DeliveryResult,
  ForkedSession,
  Pane,
  PermissionAnswer,
  PermissionPolicy,
  PolicyInput,
  ProfileInput,
  QuestionAnswerInput,
  ReadResult,
  SendInput,
  Session,
  SessionHealth,
  SessionLatency,
  SessionListQuery,
  SessionMetrics,
  type SessionService,
  SessionStats,
  SessionSummary,
  SpawnInput,
} from "../../sessions/index.ts";
import { AgError } from "../../shared/errors.ts";
import { TranscriptCursorPage, TranscriptCursorQuery } from "../../transcript/cursor.ts";
import { IdParams, wholeNumberQuery } from "./params.ts";

/** The cursor query as it arrives: strings that Elysia turns into numbers before validating. */
const CursorQueryParams = t.Object({
  before_id: t.Optional(wholeNumberQuery({ minimum: 1, description: "only entries with a smaller id" })),
  limit: t.Optional(wholeNumberQuery({ minimum: 1, maximum: 200, default: 50 })),
  role: TranscriptCursorQuery.properties.role,
});
/** Approve, reject and answer say what their keys did (docs/sessions.md, Answering). */
const AFTER_KEYS =
  "Answers the session as it is once ag's keys are pressed (what GET shows next), not as it was: pendingPermission null, status";

/** How a delivery went; why not, when it failed; whether the text answered a question instead. */
function deliveryBody(result: DeliveryResult & { answered?: boolean }) {
  return {
    delivered: result.delivered,
    attempts: result.attempts,
    ...(!result.delivered && result.reason ? { reason: result.reason } : {}),
    ...(result.answered ? { answered: true } : {}),
  };
}

/** The answer to anything that starts a session: the session, how its prompt went, warnings. */
export function createdBody(result: CreateResult) {
  return {
    ...result.session,
    reused: result.reused,
    promptDelivery: result.promptDelivery && deliveryBody(result.promptDelivery),
    ...(result.warnings.length ? { warnings: result.warnings } : {}),
  };
}

export function sessionRoutes(sessions: SessionService) {
  return new Elysia({ name: "routes/sessions" })
    .get("/v1/sessions", ({ query, request }) => sessions.list(query, principalOf(request)), {
      query: SessionListQuery,
      response: Type.Array(Session),
      detail: { summary: "List sessions, newest first; filter by status (or running) and workDir substring" },
    })
    .get("/v1/sessions/stats", ({ request }) => sessions.stats(principalOf(request)), {
      response: SessionStats,
      detail: { summary: "Counts of sessions by state" },
    })
    .post(
      "/v1/sessions",
      async ({ body, set, request }) => {
        const result = await sessions.create(body, principalOf(request));
        set.status = result.created ? 201 : 200;
        return createdBody(result);
      },
      {
        body: CreateSessionInput,
        response: { 200: CreatedSession, 201: CreatedSession },
        detail: {
          summary: "Create a session (201), or reuse an idle one in the same workDir (200)",
          description:
            "Reuse never surprises: `reuse: false` always starts a new session; a `name` given is only ever reused under that name (an idle session of another name is left alone); `reused` in the answer says which happened. A reused session keeps its name.",
        },
      },
    )
    .post(
      "/v1/sessions/batch",
      async ({ body, request }) => {
        const result = await sessions.createBatch(body.sessions, principalOf(request));
        return { created: result.created.map(createdBody), failed: result.failed };
      },
      {
        body: BatchCreateInput,
        response: BatchCreated,
        detail: {
          summary:
            "Create up to 50 sessions; partial success: {created, failed: [{index, error, code, statusCode}]}",
          description:
            "Each item is created as POST /v1/sessions would, reuse rules included (`reuse: false` per item for a new session every time).",
        },
      },
    )
    .delete("/v1/sessions/batch", ({ body, request }) => sessions.killBatch(body.ids, principalOf(request)), {
      body: BatchKillInput,
      response: BatchKilled,
      detail: { summary: "Kill several sessions: {killed, notFound}" },
    })
    .post(
      "/v1/sessions/:id/fork",
      async ({ params, set, request }) => {
        const result = await sessions.fork(params.id, principalOf(request));
        set.status = 201;
        return { ...createdBody(result), forkedFrom: params.id };
      },
      {
        params: IdParams,
        response: { 201: ForkedSession },
        detail: {
          summary: "A new session in the same workDir carrying this one's conversation (a new branch)",
        },
      },
    )
    .post(
      "/v1/sessions/:id/spawn",
      async ({ params, body, set, request }) => {
        set.status = 201;
        return createdBody(await sessions.spawn(params.id, body.prompt, principalOf(request)));
      },
      {
        params: IdParams,
        body: SpawnInput,
        response: { 201: CreatedSession },
        detail: { summary: "A child session in a new pane of this session's window, with the prompt" },
      },
    )
    .post(
      "/v1/sessions/:id/resume",
      async ({ params, request }) => createdBody(await sessions.resume(params.id, principalOf(request))),
      {
        params: IdParams,
        response: CreatedSession,
        detail: { summary: "Relaunch an ended session's conversation in a new window" },
      },
    )
    .get("/v1/sessions/:id", ({ params }) => sessions.get(params.id), {
      params: IdParams,
      response: Session,
      detail: { summary: "One session" },
    })
    .post(
      "/v1/sessions/:id/send",
      async ({ params, body }) => deliveryBody(await sessions.send(params.id, body.text)),
      {
        params: IdParams,
        body: SendInput,
        response: Delivery,
        detail: {
          summary: "Type a message into the session as one prompt",
          description:
            "While the agent asks a question (status asking), the text answers it instead: a bare number picks that option (answered: true). While it waits for a permission: 409 SESSION_BUSY.",
        },
      },
    )
    .post(
      "/v1/sessions/:id/answer",
      ({ params, body, request }) => {
        const { option, text, permissionId } = body;
        if ((option === undefined) === (text === undefined))
          throw new AgError("VALIDATION_ERROR", "give exactly one of option (a number) and text");
        const answer = option !== undefined ? { option } : { text: text! };
        return sessions.answerQuestion(params.id, answer, permissionId, principalOf(request));
      },
      {
        params: IdParams,
        body: QuestionAnswerInput,
        response: Session,
        detail: {
          summary:
            "Answer the agent's question: one of pendingPermission.options by number, or text of one's own",
          description: `${AFTER_KEYS} working.`,
        },
      },
    )
    .post(
      "/v1/sessions/:id/approve",
      ({ params, body, request }) =>
        sessions.answer(params.id, true, body?.permissionId, principalOf(request)),
      {
        params: IdParams,
        body: Type.Optional(PermissionAnswer),
        response: Session,
        detail: {
          summary: "Allow the pending permission prompt once",
          description: `${AFTER_KEYS} working.`,
        },
      },
    )
    .post(
      "/v1/sessions/:id/reject",
      ({ params, body }) => sessions.answer(params.id, false, body?.permissionId),
      {
        params: IdParams,
        body: Type.Optional(PermissionAnswer),
        response: Session,
        detail: {
          summary: "Reject the pending permission prompt",
          description: `${AFTER_KEYS} idle (the turn ends).`,
        },
      },
    )
    .post("/v1/sessions/:id/interrupt", ({ params }) => sessions.interrupt(params.id), {
      params: IdParams,
      response: Session,
      detail: { summary: "Interrupt the agent's turn (Ctrl+C)" },
    })
    .post("/v1/sessions/:id/escape", ({ params }) => sessions.escape(params.id), {
      params: IdParams,
      response: Session,
      detail: { summary: "Press Escape in the session" },
    })
    .post("/v1/sessions/:id/wake", ({ params }) => sessions.wake(params.id), {
      params: IdParams,
      response: Session,
      detail: {
        summary:
          "Start a hibernated session's agent again on its conversation; answers once it has started (a running session as it is)",
      },
    })
    .delete("/v1/sessions/:id", ({ params }) => sessions.kill(params.id), {
      params: IdParams,
      response: Session,
      detail: { summary: "Kill the session: its window closes; a second DELETE answers 404" },
    })
    .get("/v1/sessions/:id/read", ({ params }) => sessions.read(params.id), {
      params: IdParams,
      response: ReadResult,
      detail: { summary: "Status, the latest turn's assistant text, and token usage (idempotent)" },
    })
    .get(
      "/v1/sessions/:id/transcript/cursor",
      ({ params, query }) =>
        sessions.cursor(params.id, { beforeId: query.before_id, limit: query.limit ?? 50, role: query.role }),
      {
        params: IdParams,
        query: CursorQueryParams,
        response: TranscriptCursorPage,
        detail: {
          summary:
            "A page of the transcript, oldest first; pass oldest_id as before_id for the previous page",
        },
      },
    )
    .put(
      "/v1/sessions/:id/permissions",
      ({ params, body, request }) => sessions.setPolicy(params.id, body, principalOf(request)),
      {
        params: IdParams,
        body: PolicyInput,
        response: PermissionPolicy,
        detail: {
          summary:
            "Set what ag refuses this session (enforced in the agent's pre-tool hook; over ACP, on its permission requests)",
        },
      },
    )
    .put(
      "/v1/sessions/:id/permission-profile",
      ({ params, body, request }) => sessions.setProfile(params.id, body.profile, principalOf(request)),
      {
        params: IdParams,
        body: ProfileInput,
        response: PermissionPolicy,
        detail: { summary: "Set a permission profile: readonly, standard (bash asks), full" },
      },
    )
    .get("/v1/sessions/:id/health", ({ params }) => sessions.health(params.id), {
      params: IdParams,
      response: SessionHealth,
      detail: { summary: "Is the agent alive; pane, pid, idle time, and what to do next" },
    })
    .get("/v1/sessions/:id/summary", ({ params }) => sessions.summary(params.id), {
      params: IdParams,
      response: SessionSummary,
      detail: { summary: "The conversation condensed: counts, tools, files touched, last messages, tokens" },
    })
    .get("/v1/sessions/:id/metrics", ({ params }) => sessions.metrics(params.id), {
      params: IdParams,
      response: SessionMetrics,
      detail: { summary: "Tokens, turns, tool calls, deliveries, time per state" },
    })
    .get("/v1/sessions/:id/latency", ({ params }) => sessions.latency(params.id), {
      params: IdParams,
      response: SessionLatency,
      detail: { summary: "Delivery and state-detection latencies (recent samples)" },
    })
    .get("/v1/sessions/:id/pane", ({ params }) => sessions.pane(params.id), {
      params: IdParams,
      response: Pane,
      detail: { summary: "The session's terminal screen as text" },
    });
}
