import { randomUUID } from "node:crypto";
import type { Static } from "@sinclair/typebox";
import { tenantMayUse } from "../memory/service.ts";
import { AgError, isAgError } from "../shared/errors.ts";
import type { CursorQuery, TranscriptCursorPage } from "../transcript/cursor.ts";
import { createSessionActions, normalizeText } from "./actions.ts";
import { createSessionContext, type SessionServiceDeps } from "./context.ts";
import type { DeliveryResult } from "./delivery.ts";
import {
  createSessionInsight,
  type SessionHealth,
  type SessionLatency,
  type SessionMetrics,
  type SessionSummary,
} from "./insight.ts";
import { assertCapacity, launchWindow } from "./launcher.ts";
import {
  defaultName,
  newHookSecret,
  newRecord,
  type ResolvedCreateInput,
  resolveCreateInput,
  validateWorkDir,
  withMemoryContext,
} from "./lifecycle.ts";
import type { LiveSession } from "./live.ts";
import { createSessionReading } from "./reading.ts";
import { type SessionRecord, statsOf, toSession } from "./repo.ts";
import type {
  CreateSessionInput,
  PermissionPolicy,
  PermissionProfile,
  ReadResult,
  Session,
  SessionListQuery,
  SessionStats,
} from "./session.ts";
import { isTerminal } from "./session.ts";

export type { MemoryReader, SessionDefaults, SessionServiceDeps, TemplateReader } from "./context.ts";

export interface CreateResult {
  session: Session;
  created: boolean;
  reused: boolean;
  promptDelivery: DeliveryResult | null;
  warnings: string[];
}

export interface BatchResult {
  created: CreateResult[];
  failed: Array<{ index: number; error: string; code: string; statusCode: number }>;
}

/**
 * Whose sessions an operation sees: a tenant's own only, or (null, the default) every session.
 * A tenant's new sessions are bound to it and must lie within its workdirs.
 */
export interface Owner {
  tenantId?: string | null;
}

export interface SessionService {
  list(query?: SessionListQuery, owner?: Owner): Session[];
  get(id: string): Session;
  stats(owner?: Owner): SessionStats;
  /** `reuse: false` always launches a new session (pipelines, reviewers). */
  create(input: CreateSessionInput, options?: { reuse?: boolean } & Owner): Promise<CreateResult>;
  createBatch(inputs: CreateSessionInput[], owner?: Owner): Promise<BatchResult>;
  /** Ids of sessions the owner cannot see count as not found. */
  killBatch(ids: string[], owner?: Owner): Promise<{ killed: string[]; notFound: string[] }>;
  /** A new session in the same workDir that carries this one's conversation, as a new branch. */
  fork(id: string): Promise<CreateResult>;
  /** A child session in a new pane of this one's window, same workDir and permission mode. */
  spawn(id: string, prompt: string): Promise<CreateResult>;
  /** Relaunches an ended session's conversation in a new window (same session id). */
  resume(id: string): Promise<CreateResult>;
  send(id: string, text: string): Promise<DeliveryResult>;
  answer(id: string, approve: boolean, permissionId?: string): Promise<Session>;
  interrupt(id: string): Promise<Session>;
  escape(id: string): Promise<Session>;
  kill(id: string): Promise<Session>;
  pane(id: string): Promise<{ id: string; content: string }>;
  read(id: string): Promise<ReadResult>;
  cursor(id: string, query: CursorQuery): Promise<TranscriptCursorPage>;
  health(id: string): Promise<Static<typeof SessionHealth>>;
  summary(id: string): Promise<Static<typeof SessionSummary>>;
  metrics(id: string): Promise<Static<typeof SessionMetrics>>;
  latency(id: string): Static<typeof SessionLatency>;
  setPolicy(id: string, policy: Omit<PermissionPolicy, "profile">): PermissionPolicy;
  setProfile(id: string, profile: PermissionProfile): PermissionPolicy;
  /** The live session (running in a window), or SESSION_NOT_FOUND. */
  live(id: string): LiveSession;
  /** Every live session ag follows (for the supervisor). */
  all(): LiveSession[];
  /** Starts following a stored session whose window exists (creation and re-adoption). */
  follow(record: SessionRecord, booting: boolean): LiveSession;
  forget(id: string): void;
}

/** At most this many sessions start at once in a batch (each agent costs ~200 MB and CPU). */
const BATCH_CONCURRENCY = 3;

export function createSessionService(deps: SessionServiceDeps): SessionService {
  const ctx = createSessionContext(deps);
  const actions = createSessionActions(ctx);
  const reading = createSessionReading(ctx);
  const insight = createSessionInsight(ctx, reading);
  // A teammate's end is also its parent's news.
  deps.bus.subscribe((event) => {
    if (event.event !== "session.ended" || !event.session) return;
    const ended = deps.repo.get(event.session.id);
    if (ended?.parentId) {
      ctx.publish(ended, "swarm.teammate_finished", `teammate ${ended.name} ${event.detail}`, {
        parentId: ended.parentId,
        reason: event.meta.reason,
      });
    }
  });
  ctx.onIdleTimeout = (id) => {
    void actions.end(id, "idle_timeout").catch((error) => deps.logger.warn(`idle timeout of ${id}`, error));
  };

  const tenantOf = (owner?: Owner) => owner?.tenantId ?? null;
  const visibleTo = (owner?: Owner) => (s: { tenantId: string | null }) =>
    tenantOf(owner) === null || s.tenantId === tenantOf(owner);

  /** An idle session of the same owner in the same workDir, launched the same way. */
  function reusable(input: ResolvedCreateInput, tenantId: string | null): SessionRecord | null {
    const candidates = deps.repo
      .list({ status: "idle" })
      .filter((s) => s.workDir === input.workDir && s.tenantId === tenantId && ctx.live.has(s.id))
      .filter((s) => input.agentCommand === undefined || s.agentCommand === input.agentCommand)
      .filter((s) => input.permissionMode === undefined || s.permissionMode === input.permissionMode)
      .sort((a, b) => b.lastActivityAt.localeCompare(a.lastActivityAt));
    return candidates[0] ?? null;
  }

  function promptOf(
    input: ResolvedCreateInput,
    tenantId: string | null,
    warnings: string[],
  ): string | undefined {
    const keys = input.memoryKeys ?? [];
    if (input.prompt === undefined) {
      if (keys.length) warnings.push("memoryKeys ignored: there is no prompt to prepend them to");
      return undefined;
    }
    if (keys.length && deps.memory.enabled === false) {
      warnings.push("memoryKeys ignored: the memory bridge is disabled");
      return normalizeText(input.prompt, "prompt");
    }
    const memories = [];
    // Another tenant's session memories are as absent here as through the memory routes.
    const visible = (key: string) => tenantMayUse(key, tenantId, (id) => deps.repo.get(id)?.tenantId);
    for (const key of keys) {
      const entry = visible(key) ? deps.memory.get(key) : null;
      if (entry) memories.push(entry);
      else warnings.push(`memory key not found: ${key}`);
    }
    // The whole text is what gets typed: its size and characters are checked with the memories in.
    return normalizeText(withMemoryContext(input.prompt, memories), "prompt with its [Memory context]");
  }

  async function result(
    session: LiveSession,
    prompt: string | undefined,
    warnings: string[],
    reused: boolean,
  ) {
    const promptDelivery = prompt === undefined ? null : await actions.deliver(session, prompt);
    return { session: toSession(ctx.record(session.id)), created: !reused, reused, promptDelivery, warnings };
  }

  function freshRecord(input: {
    name?: string;
    workDir: string;
    agentCommand?: string | null;
    permissionMode?: SessionRecord["permissionMode"];
    stallThresholdMs?: number;
    env?: Record<string, string> | null;
    tenantId: string | null;
  }): SessionRecord {
    const id = randomUUID();
    const record = newRecord({
      id,
      name: input.name ?? defaultName(input.workDir, id),
      workDir: input.workDir,
      agentCommand: input.agentCommand ?? null,
      permissionMode: input.permissionMode ?? deps.settings.permissionMode,
      stallThresholdMs: input.stallThresholdMs ?? deps.settings.stallThresholdMs,
      tenantId: input.tenantId,
      now: deps.clock.now(),
    });
    return { ...record, env: input.env ?? null };
  }

  /** The conversation a fork or resume continues; it must have been written down. */
  async function conversationOf(rec: SessionRecord): Promise<string> {
    const path = rec.transcriptPath ?? (await deps.agent.transcript.find(rec.workDir, rec.id));
    if (!path) throw new AgError("CONFLICT", `session ${rec.id} has no conversation yet`);
    return path;
  }

  const service: SessionService = {
    list: (query, owner) => deps.repo.list(query).filter(visibleTo(owner)).map(toSession),
    get: (id) => toSession(ctx.record(id)),
    stats: (owner) =>
      tenantOf(owner) === null ? deps.repo.stats() : statsOf(deps.repo.list().filter(visibleTo(owner))),
    live: (id) => ctx.running(id),
    all: () => [...ctx.live.values()],
    follow: (record, booting) => ctx.follow(record, booting),
    forget: (id) => ctx.forget(id),

    async create(request, options) {
      const input = resolveCreateInput(
        request,
        request.templateId ? deps.templates?.defaults(request.templateId) : undefined,
      );
      const tenantId = tenantOf(options);
      // The tenant first: outside its root, whether a path exists is none of its business.
      deps.tenants?.check(tenantId, input.workDir);
      validateWorkDir(input.workDir);
      const warnings: string[] = [];
      const prompt = promptOf(input, tenantId, warnings);
      const existing = options?.reuse === false ? null : reusable(input, tenantId);
      if (existing) return result(ctx.running(existing.id), prompt, warnings, true);
      assertCapacity(ctx);
      const record = freshRecord({ ...input, tenantId });
      deps.repo.insert(record);
      const session = await launchWindow(ctx, { record, warnings });
      return result(session, prompt, warnings, false);
    },

    async createBatch(inputs, owner) {
      const created: BatchResult["created"] = [];
      const failed: BatchResult["failed"] = [];
      let next = 0;
      const worker = async () => {
        while (next < inputs.length) {
          const index = next++;
          try {
            created[index] = await service.create(inputs[index]!, owner);
          } catch (error) {
            const known = isAgError(error) ? error : new AgError("INTERNAL_ERROR", "internal error");
            if (!isAgError(error)) deps.logger.error(`batch create #${index} failed`, error);
            failed.push({ index, error: known.message, code: known.code, statusCode: known.statusCode });
          }
        }
      };
      await Promise.all(Array.from({ length: Math.min(BATCH_CONCURRENCY, inputs.length) }, worker));
      return { created: created.filter(Boolean), failed: failed.sort((a, b) => a.index - b.index) };
    },

    async killBatch(ids, owner) {
      const killed: string[] = [];
      const notFound: string[] = [];
      const visible = visibleTo(owner);
      for (const id of ids) {
        const record = deps.repo.get(id);
        if (record && !visible(record)) {
          notFound.push(id);
          continue;
        }
        try {
          await actions.kill(id);
          killed.push(id);
        } catch (error) {
          if (isAgError(error) && error.code === "SESSION_NOT_FOUND") notFound.push(id);
          else throw error;
        }
      }
      return { killed, notFound };
    },

    async fork(id) {
      const parent = ctx.record(id);
      await conversationOf(parent);
      assertCapacity(ctx);
      const record = freshRecord({ ...parent, name: `${parent.name}-fork` });
      deps.repo.insert({ ...record, permissions: parent.permissions });
      const warnings: string[] = [];
      const session = await launchWindow(ctx, {
        record: ctx.record(record.id),
        resume: { conversationId: parent.id, fork: true },
        origin: { forkedFrom: parent.id },
        warnings,
      });
      return result(session, undefined, warnings, false);
    },

    async spawn(id, prompt) {
      ctx.running(id);
      const parent = ctx.record(id);
      if (!parent.windowId) throw new AgError("CONFLICT", `session ${id} has no window to share`);
      const text = normalizeText(prompt, "prompt");
      assertCapacity(ctx);
      const siblings = deps.repo.list().filter((s) => s.parentId === id).length;
      const record = {
        ...freshRecord({ ...parent, name: `${parent.name}-teammate-${siblings + 1}` }),
        parentId: id,
      };
      deps.repo.insert({ ...record, permissions: parent.permissions });
      const warnings: string[] = [];
      const session = await launchWindow(ctx, {
        record: ctx.record(record.id),
        splitOf: parent.windowId,
        origin: { parentId: id },
        warnings,
      });
      ctx.publish(ctx.record(record.id), "swarm.teammate_spawned", `teammate of ${parent.name}`, {
        parentId: id,
      });
      return result(session, text, warnings, false);
    },

    async resume(id) {
      const ended = ctx.record(id);
      if (!isTerminal(ended.status))
        throw new AgError("CONFLICT", `session ${id} is still ${ended.status}: nothing to resume`);
      const transcript = await conversationOf(ended);
      assertCapacity(ctx);
      const at = new Date(deps.clock.now()).toISOString();
      // A new secret (and so new per-launch settings files): the ended agent may still be
      // shutting down, and its last hooks must not reach the relaunched session.
      deps.repo.update(id, {
        status: "working",
        endedAt: null,
        endReason: null,
        pendingPermission: null,
        updatedAt: at,
        hookSecret: newHookSecret(),
      });
      const warnings: string[] = [];
      const session = await launchWindow(ctx, {
        record: ctx.record(id),
        resume: { conversationId: id, fork: false },
        origin: { resumed: true },
        warnings,
      });
      // What the conversation held before is history: it must not replay as new prompts.
      await session.attachTranscript(transcript, true);
      return result(session, undefined, warnings, false);
    },

    send: actions.send,
    answer: actions.answer,
    interrupt: actions.interrupt,
    escape: actions.escape,
    kill: actions.kill,
    pane: actions.pane,
    setPolicy: actions.setPolicy,
    setProfile: actions.setProfile,
    read: reading.read,
    health: insight.health,
    summary: insight.summary,
    metrics: insight.metrics,
    latency: insight.latency,
    cursor: reading.cursor,
  };
  return service;
}
