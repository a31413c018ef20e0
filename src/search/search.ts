import { type Static, Type } from "@sinclair/typebox";
import { CreatedSession } from "../sessions/index.ts";
import { literalUnion } from "../shared/schema.ts";

/** What a turn part is to a reader: a person's prompt, the agent's answer, or a tool call/result. */
export const SEARCH_ROLES = ["prompt", "answer", "tool"] as const;
export const SearchRole = literalUnion(SEARCH_ROLES);
export type SearchRole = Static<typeof SearchRole>;

/** Where a conversation comes from: a session ag ran, or the agent CLI's own history (opt-in). */
export const SEARCH_ORIGINS = ["session", "external"] as const;
export type SearchOrigin = (typeof SEARCH_ORIGINS)[number];

export const MAX_QUERY_CHARS = 500;

export const SearchQuery = Type.Object({
  q: Type.String({
    minLength: 1,
    maxLength: MAX_QUERY_CHARS,
    description:
      'words (all must match), "a phrase", pre* (prefix), OR between alternatives; anything else is taken literally',
  }),
  agent: Type.Optional(Type.String({ maxLength: 64 })),
  host: Type.Optional(Type.String({ maxLength: 255 })),
  workDir: Type.Optional(Type.String({ maxLength: 4096, description: "this folder or below it" })),
  tenant: Type.Optional(Type.String({ maxLength: 128 })),
  status: Type.Optional(Type.String({ maxLength: 32, description: "the session's status now" })),
  since: Type.Optional(Type.String({ format: "date-time", description: "turns written at or after" })),
  until: Type.Optional(Type.String({ format: "date-time", description: "turns written before" })),
  role: Type.Optional(SearchRole),
  origin: Type.Optional(literalUnion(SEARCH_ORIGINS, { description: "external needs an admin key" })),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 20 })),
});
export type SearchQuery = Static<typeof SearchQuery>;

/** A piece of a snippet: `hit` marks the words that matched. Secrets are already redacted. */
export const SnippetPart = Type.Object({ text: Type.String(), hit: Type.Boolean() });
export type SnippetPart = Static<typeof SnippetPart>;

export const SearchHit = Type.Object({
  hit: Type.String({ description: "`<source>#<messageId>`: what ag open / resume / fork take" }),
  origin: literalUnion(SEARCH_ORIGINS),
  sessionId: Type.Union([Type.String(), Type.Null()], { description: "the ag session; null: external" }),
  conversationId: Type.Union([Type.String(), Type.Null()], {
    description: "the agent CLI's own id of an external conversation",
  }),
  title: Type.Union([Type.String(), Type.Null()]),
  agent: Type.String(),
  host: Type.String(),
  workDir: Type.Union([Type.String(), Type.Null()]),
  tenantId: Type.Union([Type.String(), Type.Null()]),
  status: Type.Union([Type.String(), Type.Null()]),
  messageId: Type.Integer({
    description: "the transcript cursor's id of the message (before_id = this + 1)",
  }),
  role: SearchRole,
  at: Type.Union([Type.String(), Type.Null()], { description: "when the agent wrote it" }),
  rank: Type.Number({ description: "BM25: lower is better" }),
  snippet: Type.Array(SnippetPart),
});
export type SearchHit = Static<typeof SearchHit>;

/** In a fleet: which hosts' hits the answer holds, and why a host's are missing. */
export const SearchFleetHosts = Type.Object({
  answered: Type.Array(Type.String(), { description: "hosts whose hits are merged in (this one first)" }),
  missing: Type.Array(Type.Object({ host: Type.String(), reason: Type.String() }), {
    description: "hosts offline or not answering in time: their hits are left out",
  }),
});
export type SearchFleetHosts = Static<typeof SearchFleetHosts>;

export const SearchResult = Type.Object({
  hits: Type.Array(SearchHit, { description: "best first" }),
  took_ms: Type.Number(),
  hosts: Type.Optional(SearchFleetHosts),
});
export type SearchResult = Static<typeof SearchResult>;

export const SearchRebuildInput = Type.Object(
  {
    import: Type.Optional(
      Type.Boolean({ description: "also index the agent CLIs' own history on this host (read-only)" }),
    ),
  },
  { additionalProperties: false },
);

export const SearchIndexStats = Type.Object({
  sources: Type.Integer({ description: "conversations indexed" }),
  external: Type.Integer({ description: "of them, external conversations" }),
  turns: Type.Integer({ description: "turn parts indexed" }),
  took_ms: Type.Number(),
});
export type SearchIndexStats = Static<typeof SearchIndexStats>;

export const SearchContinueInput = Type.Object(
  {
    hit: Type.String({ minLength: 3, maxLength: 512, description: "a hit's `hit` (`<source>#<messageId>`)" }),
    fork: Type.Optional(
      Type.Boolean({
        description: "a new session on a copy (an ended session is otherwise resumed as itself)",
      }),
    ),
  },
  { additionalProperties: false },
);

/** The session a hit was picked up in (POST /v1/search/continue). */
export const ContinuedSession = Type.Composite([
  CreatedSession,
  Type.Object({ continuedFrom: Type.String({ description: "the hit" }) }),
]);

/** A hit's reference, `<source>#<messageId>`. */
export function hitRef(sourceId: string, messageId: number): string {
  return `${sourceId}#${messageId}`;
}
