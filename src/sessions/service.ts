import type { Static } from "@sinclair/typebox";
import { SESSION_KEY_LIMITS } from "../config/schema.ts";
import { assertTerminal, type SessionDrivers } from "../drivers/index.ts";
import type { Waker } from "../events/names.ts";
import { AgError, isAgError } from "../shared/errors.ts";
import type { CursorQuery, TranscriptCursorPage } from "../transcript/cursor.ts";
import { createSessionActions, type SendResult } from "./actions.ts";
import {
  type BatchResult,
  type ConversationToFork,
  type CreateOptions,
  type CreateResult,
  createSessionCreation,
} from "./creation.ts";
import type { SessionServiceDeps } from "./deps.ts";
import type { Exits } from "./exits.ts";
import type { Hibernation } from "./hibernation/hibernation.ts";
import {
  type AgentProcess,
  createSessionInsight,
  type SessionHealth,
  type SessionLatency,
  type SessionMetrics,
  type SessionSummary,
} from "./insight.ts";
import { createLineage, isConfined, type Owner } from "./lineage.ts";
import type { LiveSessions } from "./live/registry.ts";
import { createOffspring } from "./offspring.ts";
import { createSessionReading } from "./reading.ts";
import { type SessionRecord, statsOf, toSession } from "./repo.ts";
import type {
  CreateSessionInput,
  PermissionPolicy,
  PermissionProfile,
  QuestionAnswer,
  ReadResult,
  Session,
  SessionListQuery,
  SessionStats,
} from "./session.ts";
import { isTerminal } from "./session.ts";

export type { BatchResult, CreateOptions, CreateResult } from "./creation.ts";
export type { MemoryReader, SessionDefaults, SessionServiceDeps, TemplateReader } from "./deps.ts";
export type { Owner } from "./lineage.ts";

export interface SessionService {
  list(query?: SessionListQuery, owner?: Owner): Session[];
  get(id: string): Session;
  /**
   * Whether the owner may see session `id`: its tenant's, or (a session key) its own session or
   * one it created. Everyone else's counts as not found.
   */
  sees(owner: Owner | undefined, id: string): boolean;
  stats(owner?: Owner): SessionStats;
  /**
   * Launches a session, or gives the prompt to a reusable idle one (`reuse` not false, same
   * workDir, same name when one is given).
   */
  create(input: CreateSessionInput, owner?: Owner, options?: CreateOptions): Promise<CreateResult>;
  createBatch(inputs: CreateSessionInput[], owner?: Owner): Promise<BatchResult>;
  /** Ids of sessions the owner cannot see count as not found. */
  killBatch(ids: string[], owner?: Owner): Promise<{ killed: string[]; notFound: string[] }>;
  /**
   * A new session in the same workDir that carries this one's conversation, as a new branch
   * (asked with a session key: a child of the key's session, within its bounds).
   */
  fork(id: string, owner?: Owner): Promise<CreateResult>;
  /** A fork with the conversation as its first `turns` turns left it (UNSUPPORTED_BY_AGENT where it cannot). */
  forkAt(id: string, turns: number, owner?: Owner): Promise<CreateResult>;
  /** A new session continuing a conversation ag did not start (search's external history), as a fork. */
  forkConversation(from: ConversationToFork, owner?: Owner): Promise<CreateResult>;
  /** A child session in a new pane of this one's window, same workDir and permission mode. */
  spawn(id: string, prompt: string, owner?: Owner): Promise<CreateResult>;
  /** Relaunches an ended session's conversation in a new window (same session id). */
  resume(id: string, owner?: Owner): Promise<CreateResult>;
  /** Types a message; while the agent asks a question, the text answers it. */
  send(id: string, text: string): Promise<SendResult>;
  /** A session key approves only when its own session asks nobody (docs/auth.md, Session keys). */
  answer(id: string, approve: boolean, permissionId?: string, owner?: Owner): Promise<Session>;
  /** Answers the agent's question: one of its options (1-based), or text of one's own. */
  answerQuestion(id: string, answer: QuestionAnswer, permissionId?: string, owner?: Owner): Promise<Session>;
  interrupt(id: string): Promise<Session>;
  escape(id: string): Promise<Session>;
  /** Ends the session and closes its window (`idle_timeout`: ag's own idle timeout did). */
  kill(id: string, reason?: "killed" | "idle_timeout"): Promise<Session>;
  pane(id: string): Promise<{ id: string; content: string }>;
  /** Where a running session's agent draws: its tmux pane and window (SESSION_NOT_FOUND once ended). */
  placement(id: string): { paneId: string; windowId: string };
  read(id: string): Promise<ReadResult>;
  cursor(id: string, query: CursorQuery): Promise<TranscriptCursorPage>;
  health(id: string): Promise<Static<typeof SessionHealth>>;
  summary(id: string): Promise<Static<typeof SessionSummary>>;
  metrics(id: string): Promise<Static<typeof SessionMetrics>>;
  latency(id: string): Static<typeof SessionLatency>;
  /** What each running session's agent costs the host now (its process tree), by session id. */
  agentProcesses(owner?: Owner): Promise<Map<string, Static<typeof AgentProcess>>>;
  /** The pid at the root of a running session's agent (null once it ended or without one). */
  agentPid(id: string): Promise<number | null>;
  setPolicy(id: string, policy: Omit<PermissionPolicy, "profile">, owner?: Owner): PermissionPolicy;
  setProfile(id: string, profile: PermissionProfile, owner?: Owner): PermissionPolicy;
  /**
   * Starts a hibernated session's agent again on its conversation (docs/hibernation.md) and
   * returns the session once its agent has started; a running session is returned as it is.
   */
  wake(id: string, by?: Waker): Promise<Session>;
  /** A live terminal watches the session: it is not hibernated until the returned release. */
  hold(id: string): () => void;
}

/** The parts of the sessions domain the service drives (put together in setup.ts). */
export interface SessionParts {
  live: LiveSessions;
  drivers: SessionDrivers;
  /** Agents on their way out (a resume waits for them). */
  exits: Exits;
  /** Idle sessions' agents ended, and started again when they are needed. */
  hibernation: Hibernation;
}

export function createSessionService(deps: SessionServiceDeps, parts: SessionParts): SessionService {
  const { live, drivers, exits, hibernation } = parts;
  /**
   * What wakes a hibernated session does so before it acts (nothing to wake: it acts at once);
   * what `refuse` refuses is refused first, with the session left asleep.
   */
  const awake =
    <A extends unknown[], R>(
      by: Waker,
      act: (id: string, ...rest: A) => Promise<R>,
      refuse?: (id: string) => void,
    ) =>
    async (id: string, ...rest: A): Promise<R> => {
      refuse?.(id);
      await hibernation.awake(id, by);
      return act(id, ...rest);
    };
  const record = (id: string): SessionRecord => {
    const found = deps.repo.get(id);
    if (!found) throw new AgError("SESSION_NOT_FOUND", `no session ${id}`);
    return found;
  };
  const lineage = createLineage(deps.repo);
  const actions = createSessionActions({
    ...deps,
    live,
    drivers,
    lineage,
    idleTimeoutMs: deps.settings.idleTimeoutMs ?? 0,
  });
  // A session that ended by itself (its agent exited) takes what it created with it too; one ag
  // ended has ended them already.
  deps.bus.subscribe((event) => {
    if (event.event !== "session.ended" || !event.session) return;
    void actions
      .endOffspringOf(event.session.id)
      .catch((error) => deps.logger.warn(`ending what ${event.session?.name} created`, error));
  });
  const reading = createSessionReading({
    record,
    live,
    agents: deps.agents,
    owners: deps.owners,
    logger: deps.logger,
  });
  const insight = createSessionInsight({
    record,
    reading,
    live,
    drivers,
    clock: deps.clock,
    prices: deps.settings.prices ?? deps.agents.prices(),
    defaultPrice: deps.settings.defaultPrice,
    processes: deps.processes,
  });
  const offspring = createOffspring({
    repo: deps.repo,
    lineage,
    limits: deps.settings.sessionKeys ?? SESSION_KEY_LIMITS,
    defaultMode: deps.settings.permissionMode,
  });
  const creation = createSessionCreation({
    ...deps,
    live,
    drivers,
    exits,
    record,
    deliver: actions.deliver,
    lineage,
    offspring,
  });
  const { visibleTo } = lineage;
  const answerAwake = awake("answer", actions.answer);
  const questionAwake = awake("answer", actions.answerQuestion);

  const service: SessionService = {
    list: (query, owner) => deps.repo.list(query).filter(visibleTo(owner)).map(toSession),
    get: (id) => toSession(record(id)),
    sees: lineage.sees,
    stats: (owner) =>
      isConfined(owner) ? statsOf(deps.repo.list().filter(visibleTo(owner))) : deps.repo.stats(),

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
          await actions.end(id, "killed");
          killed.push(id);
        } catch (error) {
          if (isAgError(error) && error.code === "SESSION_NOT_FOUND") notFound.push(id);
          else throw error;
        }
      }
      return { killed, notFound };
    },

    create: creation.create,
    createBatch: creation.createBatch,
    fork: awake("fork", creation.fork, creation.refuseFork),
    forkAt: creation.forkAt,
    forkConversation: creation.forkConversation,
    spawn: awake("fork", creation.spawn, creation.refuseSpawn),
    resume: creation.resume,
    send: awake("prompt", actions.send),
    answer(id, approve, permissionId, owner) {
      if (approve) offspring.assertDecides(owner, "approve a permission");
      return answerAwake(id, approve, permissionId);
    },
    answerQuestion(id, answer, permissionId, owner) {
      // A question's answer is the agent's to get; a permission's options are a decision.
      const pending = deps.repo.get(id)?.pendingPermission;
      if (pending && pending.kind !== "question") offspring.assertDecides(owner, "answer a permission");
      return questionAwake(id, answer, permissionId);
    },
    interrupt: actions.interrupt,
    escape: actions.escape,
    kill: (id, reason = "killed") => actions.end(id, reason),
    pane: actions.pane,
    placement(id) {
      const rec = record(id);
      assertTerminal(rec, "a terminal");
      if (!rec.paneId || !rec.windowId || isTerminal(rec.status))
        throw new AgError("SESSION_NOT_FOUND", `session ${id} has no pane`);
      return { paneId: rec.paneId, windowId: rec.windowId };
    },
    setPolicy(id, policy, owner) {
      offspring.assertDecides(owner, "change a permission policy");
      return actions.setPolicy(id, policy);
    },
    setProfile(id, profile, owner) {
      offspring.assertDecides(owner, "change a permission policy");
      return actions.setProfile(id, profile);
    },
    read: reading.read,
    health: insight.health,
    summary: insight.summary,
    metrics: insight.metrics,
    latency: insight.latency,
    agentProcesses: (owner) => insight.agentProcesses(deps.repo.live().filter(visibleTo(owner))),
    agentPid: insight.agentPid,
    cursor: reading.cursor,
    async wake(id, by = "api") {
      record(id);
      await hibernation.awake(id, by);
      return toSession(record(id));
    },
    hold: hibernation.hold,
  };
  return service;
}
