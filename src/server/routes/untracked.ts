import { Elysia, t } from "elysia";
import {
  AdoptedUntracked,
  AdoptUntrackedInput,
  UntrackedAgent,
  type UntrackedAgents,
} from "../../sessions/index.ts";

/**
 * Agents in ag's tmux windows without a record (the state database was lost under them):
 * listed, ended or adopted one session id at a time (src/sessions/untracked.ts, docs/storage.md).
 */
export function untrackedRoutes(untracked: UntrackedAgents) {
  return new Elysia({ name: "routes/untracked" })
    .get("/v1/untracked", async () => ({ agents: await untracked.list() }), {
      response: t.Object({ agents: t.Array(UntrackedAgent) }),
      detail: {
        summary: "Agents in ag's tmux windows that carry a session id with no record (docs/storage.md)",
        tags: ["sessions"],
      },
    })
    .delete(
      "/v1/untracked/:sessionId",
      async ({ params }) => ({ ended: await untracked.end(params.sessionId) }),
      {
        params: t.Object({ sessionId: t.String({ minLength: 1, maxLength: 200 }) }),
        response: t.Object({ ended: t.Array(UntrackedAgent) }),
        detail: {
          summary: "Ends the untracked agent tagged with this session id (its panes close)",
          tags: ["sessions"],
        },
      },
    )
    .post(
      "/v1/untracked/:sessionId/adopt",
      async ({ params, body, set }) => {
        set.status = 201;
        return untracked.adopt(params.sessionId, body ?? {});
      },
      {
        params: t.Object({ sessionId: t.String({ minLength: 1, maxLength: 200 }) }),
        body: t.Optional(AdoptUntrackedInput),
        response: { 201: AdoptedUntracked },
        detail: {
          summary:
            "Adopts the untracked terminal agent tagged with this session id: a record is made (agent, workDir and version read from its pane's processes) and the session is followed",
          tags: ["sessions"],
        },
      },
    );
}
