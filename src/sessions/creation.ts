import { randomUUID } from "node:crypto";
import { assertTerminal, DRIVER_TRAITS, type SessionDrivers } from "../drivers/index.ts";
import type { DeliveryResult } from "../drivers/tmux/delivery.ts";
import { mayUseMemory } from "../memory/service.ts";
import { AgError, isAgError } from "../shared/errors.ts";
import { headCommit } from "../shared/git.ts";
import { inSpan, type Span } from "../telemetry/index.ts";
import { normalizeText } from "./actions.ts";
import type { AdmissionHold, SessionServiceDeps } from "./deps.ts";
import type { Exits } from "./exits.ts";
import { createSessionSlots, type LauncherDeps, launchSession } from "./launcher.ts";
import {
  defaultName,
  newHookSecret,
  newRecord,
  type ResolvedCreateInput,
  resolveCreateInput,
  validateWorkDir,
  withMemoryContext,
} from "./lifecycle.ts";
import { creatorOf, type Lineage, type Owner, tenantOf } from "./lineage.ts";
import type { LiveSessions } from "./live/registry.ts";
import type { LiveSession } from "./live/session.ts";
import type { Offspring } from "./offspring.ts";
import { type SessionRecord, toSession } from "./repo.ts";
import { type CreateSessionInput, isTerminal, type Session, storedHibernation } from "./session.ts";
import { notStarted } from "./start-failure.ts";

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

/** What ag's own features ask of a session they create and run (a pipeline's stage, a reviewer). */
export interface CreateOptions {
  /**
   * `pipeline:<id>`, `consensus:<id>`: the session is theirs, never reused by another create;
   * it waits for memory (the admission queue) instead of failing.
   */
  managedBy?: string;
  /** Wait for memory under this name (a batch's items) instead of failing. */
  waitAs?: string;
}

/** Without admission by memory (no host guard) a launch holds no room. */
const NO_ROOM_HELD: AdmissionHold = { bind() {}, release() {} };

/** At most this many sessions start at once in a batch (each agent costs ~200 MB and CPU). */
const BATCH_CONCURRENCY = 3;

/** A conversation of an agent CLI that no ag session holds, to continue as a new session. */
export interface ConversationToFork {
  agent: string;
  workDir: string;
  /** The agent CLI's own id of the conversation (its --resume argument). */
  conversationId: string;
  transcriptPath: string;
  name?: string;
}

/** Sessions coming to be: created (or reused), in batches, forked, spawned, resumed. */
export function createSessionCreation(
  deps: SessionServiceDeps & {
    live: LiveSessions;
    drivers: SessionDrivers;
    exits: Pick<Exits, "gone">;
    record(id: string): SessionRecord;
    deliver(session: LiveSession, text: string): Promise<DeliveryResult>;
    lineage: Pick<Lineage, "sees">;
    offspring: Offspring;
  },
) {
  const { live, record } = deps;
  const launcher: LauncherDeps = deps;
  const slots = createSessionSlots(deps);
  const sessionOf = (rec: SessionRecord) => ({ id: rec.id, name: rec.name, workDir: rec.workDir });
  // A teammate's end is also its parent's news.
  deps.bus.subscribe((event) => {
    if (event.event !== "session.ended" || !event.session) return;
    const ended = deps.repo.get(event.session.id);
    if (ended?.parentId) {
      deps.bus.publish({
        event: "swarm.teammate_finished",
        session: sessionOf(ended),
        detail: `teammate ${ended.name} ${event.detail}`,
        meta: { parentId: ended.parentId, reason: event.meta.reason },
      });
    }
  });

  /**
   * An idle session of the same owner in the same workDir, launched the same way, and named as
   * asked: a create that names its session never gets one of another name (CONTRACT §10). A
   * session key's create reuses only a session its own session created.
   */
  function reusable(
    input: ResolvedCreateInput,
    tenantId: string | null,
    parentId: string | null,
  ): SessionRecord | null {
    const candidates = deps.repo
      .list({ status: "idle" })
      .filter((s) => s.workDir === input.workDir && s.tenantId === tenantId && live.get(s.id) !== undefined)
      .filter((s) => parentId === null || s.parentId === parentId)
      .filter((s) => s.managedBy === null && s.agent === input.agent && s.driver === input.driver)
      .filter((s) => input.name === undefined || s.name === input.name)
      .filter((s) => input.agentCommand === undefined || s.agentCommand === input.agentCommand)
      .filter((s) => (s.offerMcp === true) === (input.offerMcp === true))
      .filter((s) => input.permissionMode === undefined || s.permissionMode === input.permissionMode)
      .filter((s) => input.model === undefined || s.model === input.model)
      .sort((a, b) => b.lastActivityAt.localeCompare(a.lastActivityAt));
    return candidates[0] ?? null;
  }

  function promptOf(
    input: ResolvedCreateInput,
    owner: Owner | undefined,
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
    // Memories of sessions the owner cannot see are as absent here as through the memory routes.
    const visible = (key: string) => mayUseMemory(key, (id) => deps.lineage.sees(owner, id));
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
    span?: Span,
  ) {
    span?.setAttributes({ "ag.session.id": session.id, "ag.session.reused": reused });
    const promptDelivery = prompt === undefined ? null : await deps.deliver(session, prompt);
    // A new agent that exited before it took its prompt never will: the client hears why now.
    if (promptDelivery?.delivered === false && !reused && isTerminal(session.status().status))
      throw await notStarted(deps, session);
    if (promptDelivery)
      span?.addEvent("prompt.delivery", {
        "ag.delivery.delivered": promptDelivery.delivered,
        "ag.delivery.attempts": promptDelivery.attempts,
        ...(promptDelivery.reason ? { "ag.delivery.reason": promptDelivery.reason } : {}),
      });
    return { session: toSession(record(session.id)), created: !reused, reused, promptDelivery, warnings };
  }

  /**
   * Which agent and driver a create runs (the default agent, its terminal UI), checked against
   * what that agent can do: an unknown agent, a driver or permission mode it lacks is refused.
   */
  function agentFor<T extends ResolvedCreateInput>(input: T) {
    const agent = deps.agents.get(input.agent ?? deps.agents.defaultAgent);
    const driver = input.driver ?? "tmux";
    if (!agent.drivers.includes(driver))
      throw new AgError(
        "DRIVER_UNSUPPORTED",
        `agent ${agent.name} cannot run with the ${driver} driver (it has: ${agent.drivers.join(", ")})`,
      );
    if (input.offerMcp && driver !== "acp")
      throw new AgError(
        "VALIDATION_ERROR",
        "offerMcp is for headless sessions (driver acp): a terminal agent's MCP servers are its own config",
      );
    const mode = input.permissionMode ?? deps.settings.permissionMode;
    if (!agent.permissionModes.includes(mode))
      throw new AgError(
        "UNSUPPORTED_BY_AGENT",
        `${agent.displayName} has no permission mode equivalent to ${mode} (it has: ${agent.permissionModes.join(", ")})`,
      );
    return { ...input, agent: agent.name, driver };
  }

  /**
   * Room for one more agent of this kind (the session limit, then the host's memory), held while
   * `launch` runs (the session limit counts it until the launch is over, then its record): given back if it fails, else held until the agent has started (the host
   * domain hears of that), so that concurrent creates cannot all be let into the same room.
   */
  async function withRoom<T>(
    agent: string,
    waitAs: string | undefined,
    launch: (room: AdmissionHold) => Promise<T>,
  ): Promise<T> {
    // The slot is claimed before the first await: a create in flight counts from here on.
    const slot = slots.claim();
    try {
      const room = (await deps.admission?.(agent, waitAs)) ?? NO_ROOM_HELD;
      try {
        return await launch({
          bind(sessionId) {
            slot.bind(sessionId);
            room.bind(sessionId);
          },
          release: () => room.release(),
        });
      } catch (error) {
        room.release();
        throw error;
      }
    } finally {
      slot.release();
    }
  }

  /** A new session's record; its base commit is where its workDir's repository is now. */
  async function freshRecord(input: {
    name?: string;
    workDir: string;
    agent: string;
    driver?: SessionRecord["driver"];
    agentCommand?: string | null;
    permissionMode?: SessionRecord["permissionMode"];
    model?: string | null;
    stallThresholdMs?: number;
    env?: Record<string, string> | null;
    tenantId: string | null;
    managedBy?: string | null;
    offerMcp?: boolean;
    parentId?: string | null;
    hibernateAfterMs?: number | null;
  }): Promise<SessionRecord> {
    const id = randomUUID();
    const record = newRecord({
      baseCommit: await (deps.startCommit ?? headCommit)(
        input.workDir,
        deps.owners?.(input.tenantId) ?? null,
      ),
      managedBy: input.managedBy ?? null,
      offerMcp: input.offerMcp,
      id,
      name: input.name ?? defaultName(input.workDir, id),
      workDir: input.workDir,
      agent: input.agent,
      driver: input.driver,
      agentCommand: input.agentCommand ?? null,
      permissionMode: input.permissionMode ?? deps.settings.permissionMode,
      model: input.model,
      stallThresholdMs: input.stallThresholdMs ?? deps.settings.stallThresholdMs,
      tenantId: input.tenantId,
      parentId: input.parentId,
      hibernateAfterMs: input.hibernateAfterMs,
      now: deps.clock.now(),
    });
    return { ...record, env: input.env ?? null };
  }

  /** The agent continuing `rec`'s conversation; refused where its driver or agent cannot `need`. */
  function continuing(rec: SessionRecord, need: "fork" | "resume") {
    if (!DRIVER_TRAITS[rec.driver].continues)
      throw new AgError("UNSUPPORTED_BY_AGENT", `a ${rec.driver} session cannot ${need} yet (${rec.id})`);
    const agent = deps.agents.get(rec.agent, rec.agentVersion);
    if (!agent.capabilities.includes(need))
      throw new AgError("UNSUPPORTED_BY_AGENT", `${agent.displayName} cannot ${need} a conversation`);
    return agent;
  }

  /** The conversation a fork or resume continues; it must have been written down. */
  async function conversationOf(rec: SessionRecord, need: "fork" | "resume"): Promise<string> {
    const agent = continuing(rec, need);
    const path = rec.transcriptPath ?? (await agent.transcript.find(rec.workDir, rec.id));
    if (!path) throw new AgError("CONFLICT", `session ${rec.id} has no conversation yet`);
    return path;
  }

  /** One create (or reuse), inside its `session.create` span. */
  async function createOne(
    request: CreateSessionInput,
    owner: Owner | undefined,
    options: CreateOptions,
    span: Span,
  ): Promise<CreateResult> {
    const given = resolveCreateInput(
      request,
      request.templateId ? deps.templates?.defaults(request.templateId) : undefined,
    );
    const tenantId = tenantOf(owner);
    // The tenant first: outside its root, whether a path exists is none of its business.
    deps.tenants?.check(tenantId, given.workDir);
    // A session key's session: within its creator's bounds (the template applied), its child.
    const parentId = deps.offspring.parentFor(owner, given);
    const input = agentFor({ ...given, workDir: validateWorkDir(given.workDir) });
    const warnings: string[] = [];
    const prompt = promptOf(input, owner, warnings);
    const existing =
      request.reuse === false || options.managedBy ? null : reusable(input, tenantId, parentId);
    if (existing) return result(live.running(existing.id), prompt, warnings, true, span);
    const session = await deps.offspring.within(owner, parentId, () =>
      withRoom(input.agent, options.waitAs ?? options.managedBy, async (room) => {
        const fresh = await freshRecord({
          ...input,
          hibernateAfterMs: storedHibernation(input.hibernate),
          tenantId,
          managedBy: options.managedBy,
          parentId,
        });
        deps.repo.insert(fresh);
        room.bind(fresh.id);
        span.setAttribute("ag.session.id", fresh.id);
        return launchSession(launcher, { record: fresh, warnings });
      }),
    );
    span.addEvent("session.launched");
    return result(session, prompt, warnings, false, span);
  }

  /**
   * A new session continuing `id`'s conversation: all of it, or (`turns` given) a copy of it as
   * its first `turns` turns left it, which the new session resumes as its own conversation.
   */
  async function forkNow(id: string, owner?: Owner, turns?: number): Promise<CreateResult> {
    const parent = record(id);
    const transcriptPath = await conversationOf(parent, "fork");
    const agent = deps.agents.get(parent.agent, parent.agentVersion);
    const cut = agent.transcript.conversationAt;
    if (turns !== undefined && !cut)
      throw new AgError(
        "UNSUPPORTED_BY_AGENT",
        `${agent.displayName} cannot rewind a conversation to a turn`,
      );
    // Forked with a session key: a child of the key's session (within its bounds, as the forked
    // session is); otherwise nobody's.
    const parentId = creatorOf(owner);
    const warnings: string[] = [];
    const session = await deps.offspring.within(owner, parentId, () =>
      withRoom(parent.agent, undefined, async (room) => {
        const fresh = await freshRecord({
          ...parent,
          name: `${parent.name}-fork`,
          managedBy: null,
          parentId,
        });
        // Cut before the record exists: a conversation with fewer turns refuses with nothing made.
        const copy = turns === undefined || !cut ? null : await cut(transcriptPath, turns, fresh.id);
        deps.repo.insert({ ...fresh, permissions: parent.permissions });
        room.bind(fresh.id);
        const resume = copy
          ? { conversationId: fresh.id, fork: false, transcriptPath: copy }
          : { conversationId: parent.id, fork: true, transcriptPath };
        const launched = await launchSession(launcher, {
          record: record(fresh.id),
          resume,
          origin: { forkedFrom: parent.id },
          warnings,
        });
        // The copy's turns are history: they must not replay as new prompts.
        if (copy) await launched.attachTranscript(copy, true);
        return launched;
      }),
    );
    return result(session, undefined, warnings, false);
  }

  /**
   * A new session of `from.agent` in `from.workDir` continuing a conversation ag did not start
   * (the agent CLI's own history, found by search), as a fork: the agent writes a conversation of
   * its own, and the user's file is never written (docs/search.md).
   */
  async function forkConversationNow(from: ConversationToFork, owner?: Owner): Promise<CreateResult> {
    const agent = deps.agents.get(from.agent);
    if (!agent.capabilities.includes("fork"))
      throw new AgError("UNSUPPORTED_BY_AGENT", `${agent.displayName} cannot fork a conversation`);
    const tenantId = tenantOf(owner);
    deps.tenants?.check(tenantId, from.workDir);
    const input = agentFor({ agent: from.agent, workDir: validateWorkDir(from.workDir) });
    const parentId = creatorOf(owner);
    const warnings: string[] = [];
    const session = await deps.offspring.within(owner, parentId, () =>
      withRoom(agent.name, undefined, async (room) => {
        const fresh = await freshRecord({ ...input, name: from.name, tenantId, managedBy: null, parentId });
        deps.repo.insert(fresh);
        room.bind(fresh.id);
        return launchSession(launcher, {
          record: record(fresh.id),
          resume: { conversationId: from.conversationId, fork: true, transcriptPath: from.transcriptPath },
          warnings,
        });
      }),
    );
    return result(session, undefined, warnings, false);
  }

  async function spawnNow(id: string, prompt: string, owner?: Owner): Promise<CreateResult> {
    live.running(id);
    const parent = record(id);
    assertTerminal(parent, "a split pane");
    const windowId = parent.windowId;
    if (!windowId) throw new AgError("CONFLICT", `session ${id} has no window to share`);
    const text = normalizeText(prompt, "prompt");
    const warnings: string[] = [];
    const session = await deps.offspring.within(owner, id, () =>
      withRoom(parent.agent, undefined, async (room) => {
        const siblings = deps.repo.list().filter((s) => s.parentId === id).length;
        const name = `${parent.name}-teammate-${siblings + 1}`;
        const fresh = await freshRecord({ ...parent, name, parentId: id });
        deps.repo.insert({ ...fresh, permissions: parent.permissions });
        room.bind(fresh.id);
        return launchSession(launcher, {
          record: record(fresh.id),
          splitOf: windowId,
          origin: { parentId: id },
          warnings,
        });
      }),
    );
    deps.bus.publish({
      event: "swarm.teammate_spawned",
      session: sessionOf(session.record()),
      detail: `teammate of ${parent.name}`,
      meta: { parentId: id },
    });
    return result(session, text, warnings, false);
  }

  async function resumeNow(id: string, owner?: Owner): Promise<CreateResult> {
    const ended = record(id);
    if (!isTerminal(ended.status))
      throw new AgError("CONFLICT", `session ${id} is still ${ended.status}: nothing to resume`);
    const transcript = await conversationOf(ended, "resume");
    // Resumed with a session key: running again, it counts among its parent's children.
    return deps.offspring.within(owner, ended.parentId, () => relaunch(ended, transcript));
  }

  async function relaunch(ended: SessionRecord, transcript: string): Promise<CreateResult> {
    const { id } = ended;
    const warnings: string[] = [];
    const session = await withRoom(ended.agent, undefined, async (room) => {
      room.bind(id);
      // Its agent may still be on its way out: one conversation is never run by two agents.
      await deps.exits.gone(id);
      // A new secret (and so new per-launch settings files): the ended agent may still be
      // shutting down, and its last hooks must not reach the relaunched session. Its state
      // becomes "working" when the launch is observed, like any other change of state.
      deps.repo.update(id, { hookSecret: newHookSecret() });
      return launchSession(launcher, {
        record: record(id),
        resume: { conversationId: id, fork: false, transcriptPath: transcript },
        origin: { resumed: true },
        warnings,
      });
    });
    // What the conversation held before is history: it must not replay as new prompts.
    await session.attachTranscript(transcript, true);
    return result(session, undefined, warnings, false);
  }

  const creation = {
    create(request: CreateSessionInput, owner?: Owner, options: CreateOptions = {}): Promise<CreateResult> {
      const attributes = options.managedBy ? { "ag.session.managed_by": options.managedBy } : {};
      return inSpan("session.create", attributes, (span) => createOne(request, owner, options, span));
    },

    async createBatch(inputs: CreateSessionInput[], owner?: Owner): Promise<BatchResult> {
      const created: BatchResult["created"] = [];
      const failed: BatchResult["failed"] = [];
      let next = 0;
      const worker = async () => {
        while (next < inputs.length) {
          const index = next++;
          try {
            created[index] = await creation.create(inputs[index]!, owner, { waitAs: "batch" });
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

    fork(id: string, owner?: Owner): Promise<CreateResult> {
      return inSpan("session.create", { "ag.session.origin": "fork", "ag.session.parent_id": id }, () =>
        forkNow(id, owner),
      );
    },

    /** A fork whose conversation is `id`'s as its first `turns` turns left it (a rewind). */
    forkAt(id: string, turns: number, owner?: Owner): Promise<CreateResult> {
      return inSpan("session.create", { "ag.session.origin": "fork", "ag.session.parent_id": id }, () =>
        forkNow(id, owner, turns),
      );
    },

    forkConversation(from: ConversationToFork, owner?: Owner): Promise<CreateResult> {
      return inSpan("session.create", { "ag.session.origin": "fork" }, () =>
        forkConversationNow(from, owner),
      );
    },

    /** Throws what a fork of `id` would be refused with before anything is made (or woken). */
    refuseFork(id: string): void {
      continuing(record(id), "fork");
    },

    /** Throws what a spawn beside `id` would be refused with before anything is made (or woken). */
    refuseSpawn(id: string): void {
      assertTerminal(record(id), "a split pane");
    },

    spawn(id: string, prompt: string, owner?: Owner): Promise<CreateResult> {
      return inSpan("session.create", { "ag.session.origin": "spawn", "ag.session.parent_id": id }, () =>
        spawnNow(id, prompt, owner),
      );
    },

    resume(id: string, owner?: Owner): Promise<CreateResult> {
      return inSpan("session.create", { "ag.session.origin": "resume", "ag.session.parent_id": id }, () =>
        resumeNow(id, owner),
      );
    },
  };
  return creation;
}
