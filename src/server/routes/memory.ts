import { Type } from "@sinclair/typebox";
import { Elysia } from "elysia";
import { principalOf } from "../../auth/principal.ts";
import {
  MemoryDeleted,
  MemoryEntry,
  MemoryInput,
  MemoryListQuery,
  MemoryScopeQuery,
  type MemoryService,
  mayUseMemory,
  SessionMemoryInput,
} from "../../memory/index.ts";
import type { SessionService } from "../../sessions/index.ts";
import { AgError } from "../../shared/errors.ts";
import { IdParams } from "./params.ts";

const Entries = Type.Array(MemoryEntry);
const tags = ["memory"];

/** The memory bridge: shared key/value notes for agents, and each session's own. */
export function memoryRoutes(memory: MemoryService, sessions: Pick<SessionService, "get" | "sees">) {
  const mayUse = (request: Request) => {
    const principal = principalOf(request);
    return (key: string) => mayUseMemory(key, (id) => sessions.sees(principal, id));
  };
  /** A session memory the caller cannot see is as absent as its session. */
  const owned = (request: Request, key: string) => {
    if (!mayUse(request)(key)) throw new AgError("SESSION_NOT_FOUND", `no session ${key.split("/")[1]}`);
    return key;
  };
  return new Elysia({ name: "routes/memory" })
    .post(
      "/v1/memory",
      ({ body, set, request }) => {
        owned(request, body.key);
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
    .get(
      "/v1/memory",
      ({ query, request }) => {
        const visible = mayUse(request);
        return memory.list(query.prefix).filter((entry) => visible(entry.key));
      },
      {
        query: MemoryListQuery,
        response: Entries,
        detail: { summary: "Memory entries, all or those whose key starts with prefix, in key order", tags },
      },
    )
    .get("/v1/memory/*", ({ params, request }) => memory.get(owned(request, decodeKey(params["*"]))), {
      response: MemoryEntry,
      detail: { summary: "One memory entry; the key may contain /", tags },
    })
    .delete(
      "/v1/memory/*",
      ({ params, request }) => {
        const key = owned(request, decodeKey(params["*"]));
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
        params: IdParams,
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
      { params: IdParams, response: Entries, detail: { summary: "A session's memories", tags } },
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
