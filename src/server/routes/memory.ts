import { Type } from "@sinclair/typebox";
import { Elysia } from "elysia";
import {
  MemoryDeleted,
  MemoryEntry,
  MemoryInput,
  MemoryListQuery,
  MemoryScopeQuery,
  type MemoryService,
  SessionMemoryInput,
} from "../../memory/index.ts";
import type { SessionService } from "../../sessions/index.ts";

const Id = Type.Object({ id: Type.String() });
const Entries = Type.Array(MemoryEntry);
const tags = ["memory"];

/** The memory bridge: shared key/value notes for agents, and each session's own. */
export function memoryRoutes(memory: MemoryService, sessions: Pick<SessionService, "get">) {
  return new Elysia({ name: "routes/memory" })
    .post(
      "/v1/memory",
      ({ body, set }) => {
        const { entry, created } = memory.set(body);
        set.status = created ? 201 : 200;
        return entry;
      },
      {
        body: MemoryInput,
        response: { 200: MemoryEntry, 201: MemoryEntry },
        detail: { summary: "Store a memory entry (201 new key, 200 replaced)", tags },
      },
    )
    .get("/v1/memory", ({ query }) => memory.list(query.prefix), {
      query: MemoryListQuery,
      response: Entries,
      detail: { summary: "Memory entries, all or those whose key starts with prefix, in key order", tags },
    })
    .get("/v1/memory/*", ({ params }) => memory.get(decodeKey(params["*"])), {
      response: MemoryEntry,
      detail: { summary: "One memory entry; the key may contain /", tags },
    })
    .delete(
      "/v1/memory/*",
      ({ params }) => {
        const key = decodeKey(params["*"]);
        memory.delete(key);
        return { key, deleted: true as const };
      },
      { response: MemoryDeleted, detail: { summary: "Delete a memory entry", tags } },
    )
    .get("/v1/memories", ({ query }) => memory.scope(query.scope), {
      query: MemoryScopeQuery,
      response: Entries,
      detail: { summary: "Entries of a scope: keys stored as project/…, user/… or team/…", tags },
    })
    .post(
      "/v1/sessions/:id/memories",
      ({ params, body, set }) => {
        sessions.get(params.id);
        const { entry, created } = memory.setForSession(params.id, body);
        set.status = created ? 201 : 200;
        return entry;
      },
      {
        params: Id,
        body: SessionMemoryInput,
        response: { 200: MemoryEntry, 201: MemoryEntry },
        detail: { summary: "Attach a memory to a session (stored as session/<id>/<key>)", tags },
      },
    )
    .get(
      "/v1/sessions/:id/memories",
      ({ params }) => {
        sessions.get(params.id);
        return memory.listForSession(params.id);
      },
      { params: Id, response: Entries, detail: { summary: "A session's memories", tags } },
    );
}

/** Elysia hands the wildcard over as it came in the URL: `%2F` and `/` name the same key. */
function decodeKey(raw: string): string {
  try {
    return decodeURIComponent(raw);
  } catch {
    return raw;
  }
}
