import { Type } from "@sinclair/typebox";
import { Elysia } from "elysia";
import { principalOf } from "../../auth/principal.ts";
import { grants } from "../../auth/scopes.ts";
import {
  ContinuedSession,
  SearchContinueInput,
  type Searcher,
  SearchIndexStats,
  SearchQuery,
  SearchRebuildInput,
  SearchResult,
  type SearchService,
} from "../../search/index.ts";
import type { SessionService } from "../../sessions/index.ts";
import { AgError } from "../../shared/errors.ts";
import { wholeNumberQuery } from "./params.ts";
import { createdBody } from "./sessions.ts";

const tags = ["search"];

/** The query as it arrives: `limit` is text that Elysia turns into a number before validating. */
const SearchQueryParams = Type.Object({
  ...SearchQuery.properties,
  limit: Type.Optional(wholeNumberQuery({ minimum: 1, maximum: 100, default: 20 })),
});

/** Who asks: their sessions; external history only for an admin without a tenant. */
function searcherOf(request: Request): Searcher {
  const principal = principalOf(request);
  return { owner: principal, admin: grants(principal.scopes, "admin") && principal.tenantId === null };
}

/** Search every conversation (docs/search.md). */
export function searchRoutes(
  search: SearchService,
  sessions: Pick<SessionService, "resume" | "fork" | "forkConversation">,
  /** In a fleet: this host's answer merged with every other live host's (src/fleet/search.ts). */
  acrossFleet?: (request: Request, local: SearchResult) => Promise<SearchResult>,
) {
  /**
   * Picks up from a hit: an ag session is resumed (or forked); an external conversation is
   * continued as a new session of its agent, always as a fork (its file stays untouched).
   */
  async function continueFrom(request: Request, hit: string, fork: boolean) {
    const principal = principalOf(request);
    const { source } = search.resolve(hit, searcherOf(request));
    if (source.origin === "session")
      return fork ? sessions.fork(source.id, principal) : sessions.resume(source.id, principal);
    if (!source.workDir || !source.conversationId)
      throw new AgError("CONFLICT", `the conversation of ${hit} names no folder to continue it in`);
    return sessions.forkConversation(
      {
        agent: source.agent,
        workDir: source.workDir,
        conversationId: source.conversationId,
        transcriptPath: source.path,
        name: source.title ? `${source.title.slice(0, 40)} (continued)` : undefined,
      },
      principal,
    );
  }

  return new Elysia({ name: "routes/search" })
    .get(
      "/v1/search",
      async ({ query, request }) => {
        const local = search.search(query, searcherOf(request));
        return acrossFleet ? await acrossFleet(request, local) : local;
      },
      {
        query: SearchQueryParams,
        response: SearchResult,
        detail: {
          summary:
            "Turns of every session (and, for an admin, imported history) matching q, best first (BM25), with redacted snippets; in a fleet, every live host's",
          tags,
        },
      },
    )
    .post("/v1/search/rebuild", ({ body }) => search.rebuild({ importHistory: body?.import === true }), {
      body: Type.Optional(SearchRebuildInput),
      response: SearchIndexStats,
      detail: { summary: "Drop the index and read every session's transcript again (admin)", tags },
    })
    .post(
      "/v1/search/continue",
      async ({ body, set, request }) => {
        const result = await continueFrom(request, body.hit, body.fork === true);
        // Resumed under its own id, as POST /resume answers (200); a new session otherwise (201).
        set.status = result.session.id === body.hit.slice(0, body.hit.lastIndexOf("#")) ? 200 : 201;
        return { ...createdBody(result), continuedFrom: body.hit };
      },
      {
        body: SearchContinueInput,
        response: { 200: ContinuedSession, 201: ContinuedSession },
        detail: {
          summary:
            "Pick up from a hit: resume (or fork) its session, or continue an external conversation as a new session",
          tags,
        },
      },
    )
    .post("/v1/search/import", () => search.importHistory(), {
      response: SearchIndexStats,
      detail: {
        summary:
          "Index the agent CLIs' own history on this host, read only; again: only what changed (admin)",
        tags,
      },
    });
}
