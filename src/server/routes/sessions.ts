import { Type } from "@sinclair/typebox";
import { Elysia } from "elysia";
import { Session, SessionListQuery, type SessionService, SessionStats } from "../../sessions/index.ts";

export function sessionRoutes(sessions: SessionService) {
  return new Elysia({ name: "routes/sessions" })
    .get("/v1/sessions", ({ query }) => sessions.list(query), {
      query: SessionListQuery,
      response: Type.Array(Session),
      detail: { summary: "List sessions, newest first; filter by status (or running) and workDir substring" },
    })
    .get("/v1/sessions/stats", () => sessions.stats(), {
      response: SessionStats,
      detail: { summary: "Counts of sessions by state" },
    })
    .get("/v1/sessions/:id", ({ params }) => sessions.get(params.id), {
      params: Type.Object({ id: Type.String() }),
      response: Session,
      detail: { summary: "One session" },
    });
}
