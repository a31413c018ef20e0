import type { AgentAdapter } from "../agents/agent.ts";
import type { HistoryConversation } from "../agents/history.ts";
import type { AgentRegistry } from "../agents/registry.ts";
import { type EventBus, isStatusEvent } from "../events/bus.ts";
import type { Owner, SessionRecord, SessionRepo } from "../sessions/index.ts";
import { isConfined, transcriptFileOf, transcriptSource } from "../sessions/index.ts";
import { AgError } from "../shared/errors.ts";
import type { Logger } from "../shared/log.ts";
import type { TenantUsers } from "../shared/run-as.ts";
import {
  createSourceIndexer,
  indexStoredConversation,
  type SourceIndexer,
  type TranscriptFile,
} from "./indexer.ts";
import { toMatchExpression } from "./query.ts";
import {
  hitRef,
  type SearchHit,
  type SearchIndexStats,
  type SearchQuery,
  type SearchResult,
} from "./search.ts";
import { snippetOf } from "./snippet.ts";
import type { SearchStore, SourceMeta, SourceRow } from "./store.ts";

/** Events after which a session's transcript may hold new lines (its messages, its turn's end). */
const MAY_HAVE_WRITTEN = /^(?:message\.|session\.(?:idle|turn_ended|ended|killed)$)/;

export interface SearchServiceDeps {
  store: SearchStore;
  repo: Pick<SessionRepo, "get" | "list">;
  agents: Pick<AgentRegistry, "get" | "all">;
  owners?: TenantUsers;
  bus: Pick<EventBus, "subscribe">;
  logger: Logger;
  /**
   * The name hits carry as their host: this machine's. The seam of a fleet: each host indexes the
   * sessions it runs, and a fleet search asks every host (docs/search.md).
   */
  host: string;
  /** The sessions an owner sees (confined callers: a tenant, a session key). */
  visibleSessions(owner: Owner): string[];
}

/** Who asks: which sessions they see, and whether they may see external history (admin, no tenant). */
export interface Searcher {
  owner?: Owner;
  admin: boolean;
}

export type SearchService = ReturnType<typeof createSearchService>;

/**
 * Every turn of every session, searchable: the index follows each session's transcript as it
 * grows (woken by the session's events, no polling), catches up at start, is rebuilt on demand,
 * and takes in the agent CLIs' own history when asked (import).
 */
export function createSearchService(deps: SearchServiceDeps) {
  const { store, logger } = deps;
  const indexers = new Map<string, SourceIndexer>();
  const running = new Map<string, Promise<void>>();
  const again = new Set<string>();
  /** What each followed session's row last said (but its status), to write it only when that changes. */
  const written = new Map<string, string>();
  let stopped = false;

  function sessionMeta(rec: SessionRecord, path: string): SourceMeta {
    return {
      id: rec.id,
      origin: "session",
      agent: rec.agent,
      host: deps.host,
      workDir: rec.workDir,
      tenantId: rec.tenantId ?? null,
      status: rec.status,
      conversationId: null,
      title: rec.name,
      path,
    };
  }

  /** The session's indexer, made when its transcript is first known; null while it has none. */
  async function sessionIndexer(id: string): Promise<SourceIndexer | null> {
    const found = deps.repo.get(id);
    if (!found) return null;
    const file = await transcriptFileOf(found, deps.agents, deps.owners);
    // Read again after the wait: a status saved meanwhile (its event already applied) must not be
    // written back as it was before.
    const rec = deps.repo.get(id);
    if (!file || !rec) return null;
    let indexer = indexers.get(id);
    if (!indexer || indexer.path !== file.path) {
      indexer = createSourceIndexer(store, id, file);
      indexers.set(id, indexer);
      written.delete(id);
    }
    // The row is written when what it says changed (its status events keep the status current).
    const meta = sessionMeta(rec, file.path);
    const key = JSON.stringify({ ...meta, status: null });
    if (written.get(id) !== key) {
      store.upsertSource(meta);
      written.set(id, key);
    }
    return indexer;
  }

  async function indexSession(id: string): Promise<void> {
    const indexer = await sessionIndexer(id);
    if (indexer) await indexer.catchUp();
    // An ended session's file no longer grows: its cursor index is not kept in memory.
    const rec = deps.repo.get(id);
    if (!rec || rec.endedAt) {
      indexers.delete(id);
      written.delete(id);
    }
  }

  /** Indexes a session now, or right after the pass already under way (passes never overlap). */
  function schedule(id: string): Promise<void> {
    if (stopped) return Promise.resolve();
    const current = running.get(id);
    if (current) {
      again.add(id);
      return current;
    }
    const pass = indexSession(id)
      .catch((error) => logger.warn(`search: indexing session ${id} failed`, error))
      .finally(() => {
        running.delete(id);
        if (again.delete(id)) void schedule(id);
      });
    running.set(id, pass);
    return pass;
  }

  const unsubscribe = deps.bus.subscribe((event) => {
    const id = event.session?.id;
    if (!id) return;
    if (isStatusEvent(event)) store.setStatus(id, event.meta.status);
    if (MAY_HAVE_WRITTEN.test(event.event)) void schedule(id);
  });

  /** Every session's transcript, caught up (ag's start, a rebuild); sessions gone are forgotten. */
  async function catchUpSessions(): Promise<void> {
    const known = new Set(store.sources("session").map((s) => s.id));
    for (const rec of deps.repo.list()) {
      if (stopped) return;
      known.delete(rec.id);
      await schedule(rec.id);
    }
    for (const gone of known) store.remove(gone);
  }

  /** Takes in (or catches up with) the agent CLIs' own conversations; ag's sessions are skipped. */
  async function importHistory(): Promise<void> {
    const sessionFiles = new Set(store.sources("session").map((s) => s.path));
    const seen = await sessionConversations();
    for (const agent of deps.agents.all()) {
      const conversations = (await agent.transcript.history?.().catch(() => [])) ?? [];
      for (const conversation of conversations) {
        if (stopped) return;
        if (sessionFiles.has(conversation.path) || deps.repo.get(conversation.conversationId)) continue;
        const id = externalId(agent.name, conversation.conversationId);
        if (seen.has(id)) continue; // a resumed Gemini chat leaves more than one file: the first wins
        seen.add(id);
        await importConversation(agent, id, conversation).catch((error) =>
          logger.warn(`search: importing ${conversation.path} failed`, error),
        );
      }
    }
  }

  /**
   * The agents' own conversations ag's sessions had, as external ids, where a session's file names
   * them (OpenCode's plugin file; a headless session's ACP session id): the agents' own stores
   * hold ag's sessions' conversations beside the user's, and the sessions are indexed already.
   */
  async function sessionConversations(): Promise<Set<string>> {
    const ids = new Set<string>();
    for (const source of store.sources("session")) {
      const rec = deps.repo.get(source.id);
      const agent = rec ? deps.agents.all().find((a) => a.name === rec.agent) : undefined;
      if (!rec || !agent) continue;
      // A headless session's file is ag's own: the ACP session id it records is the agent's id.
      const { transcript } = transcriptSource(rec, agent);
      const named = (await transcript.conversationsIn?.(source.path).catch(() => [])) ?? [];
      for (const conversationId of named) ids.add(externalId(agent.name, conversationId));
    }
    return ids;
  }

  async function importConversation(agent: AgentAdapter, id: string, conversation: HistoryConversation) {
    const file: TranscriptFile = { path: conversation.path, format: agent.transcript.format };
    const known = store.source(id);
    const { stored } = conversation;
    if (stored) {
      if (known && known.path === file.path && known.fileMtimeMs === stored.stamp) return;
      store.upsertSource(externalMeta(agent, id, conversation));
      indexStoredConversation(store, id, stored.messages(), stored.stamp);
      return;
    }
    const info = Bun.file(conversation.path);
    const size = info.size;
    const mtime = Math.floor(info.lastModified);
    if (known && known.path === file.path && known.fileSize === size && known.fileMtimeMs === mtime) return;
    store.upsertSource(externalMeta(agent, id, conversation));
    await createSourceIndexer(store, id, file).catchUp();
  }

  function externalMeta(agent: AgentAdapter, id: string, conversation: HistoryConversation): SourceMeta {
    return {
      id,
      origin: "external",
      agent: agent.name,
      host: deps.host,
      workDir: conversation.workDir,
      tenantId: null,
      status: null,
      conversationId: conversation.conversationId,
      title: null,
      path: conversation.path,
    };
  }

  async function timed(work: () => Promise<void>): Promise<SearchIndexStats> {
    const started = performance.now();
    await work();
    return { ...store.counts(), took_ms: Math.round(performance.now() - started) };
  }

  return {
    /** Catches up with every session (and, with `importHistory`, the agents' own history). */
    async start(options: { importHistory?: boolean } = {}): Promise<void> {
      await catchUpSessions();
      if (options.importHistory) await importHistory();
    },

    /** Waits for a session's pending index pass (tests, `ag search` right after a turn). */
    settle: (id: string) => running.get(id) ?? Promise.resolve(),

    /** Indexes a session now (what its events would do). */
    index: (id: string) => schedule(id),

    /** Drops and re-reads every session's transcript; with `importHistory`, the external history too. */
    rebuild(options: { importHistory?: boolean } = {}): Promise<SearchIndexStats> {
      return timed(async () => {
        await Promise.all(running.values());
        store.clear("session");
        indexers.clear();
        written.clear();
        await catchUpSessions();
        if (options.importHistory) {
          store.clear("external");
          await importHistory();
        }
      });
    },

    /** Takes in the agents' own history (only what changed since the last import is read again). */
    importHistory: () => timed(importHistory),

    stats: () => ({ ...store.counts(), took_ms: 0 }),

    search(query: SearchQuery, who: Searcher): SearchResult {
      const started = performance.now();
      const expression = toMatchExpression(query.q);
      const confined = who.owner !== undefined && isConfined(who.owner);
      if (query.origin === "external" && (!who.admin || confined))
        throw new AgError("FORBIDDEN", "external conversations are searched with an admin key only");
      const rows = store.match(
        expression,
        {
          agent: query.agent,
          host: query.host,
          workDir: query.workDir,
          tenantId: query.tenant,
          status: query.status,
          since: query.since,
          until: query.until,
          role: query.role,
          origin: who.admin && !confined ? query.origin : "session",
          sessionIds: confined ? deps.visibleSessions(who.owner!) : undefined,
        },
        query.limit ?? 20,
      );
      return { hits: rows.map(toHit), took_ms: Math.round((performance.now() - started) * 10) / 10 };
    },

    /** The conversation a hit names (`<source>#<message>`), as the caller may see it. */
    resolve(ref: string, who: Searcher): { source: SourceRow; messageId: number } {
      const match = /^(.+)#(\d+)$/.exec(ref);
      const source = match ? store.source(match[1]!) : null;
      const confined = who.owner !== undefined && isConfined(who.owner);
      const visible =
        source &&
        (source.origin === "external"
          ? who.admin && !confined
          : !confined || deps.visibleSessions(who.owner!).includes(source.id));
      if (!source || !visible) throw new AgError("SEARCH_HIT_NOT_FOUND", `no search hit ${ref}`);
      return { source, messageId: Number(match![2]) };
    },

    stop(): void {
      stopped = true;
      unsubscribe();
      indexers.clear();
    },
  };
}

/** An external conversation's source id: the agent and its own id. */
export function externalId(agent: string, conversationId: string): string {
  return `${agent}:${conversationId}`;
}

function toHit(row: ReturnType<SearchStore["match"]>[number]): SearchHit {
  return {
    hit: hitRef(row.id, row.messageId),
    origin: row.origin,
    sessionId: row.origin === "session" ? row.id : null,
    conversationId: row.conversationId,
    title: row.title,
    agent: row.agent,
    host: row.host,
    workDir: row.workDir,
    tenantId: row.tenantId,
    status: row.status,
    messageId: row.messageId,
    role: row.role,
    at: row.at,
    rank: row.rank,
    snippet: snippetOf(row.marked),
  };
}
