import { randomUUID } from "node:crypto";
import type { AgentAdapter } from "../agents/agent.ts";
import type { PermissionMode } from "../config/schema.ts";
import type { EventBus } from "../events/bus.ts";
import type { Clock } from "../shared/clock.ts";
import { AgError } from "../shared/errors.ts";
import type { Logger } from "../shared/log.ts";
import type { Tmux } from "../tmux/tmux.ts";
import type { CursorQuery, TranscriptCursorPage } from "../transcript/cursor.ts";
import { DEFAULT_DELIVERY, type DeliveryOptions, type DeliveryResult } from "./delivery.ts";
import { createTranscriptFollower, type TranscriptFollower } from "./follower.ts";
import {
  assertTypeable,
  defaultName,
  newRecord,
  sessionDir,
  validateWorkDir,
  withMemoryContext,
} from "./lifecycle.ts";
import { createLiveSession, type LiveSession } from "./live.ts";
import { deliverTo } from "./port.ts";
import { type SessionRecord, type SessionRepo, toSession } from "./repo.ts";
import type {
  CreateSessionInput,
  PermissionPolicy,
  PermissionProfile,
  ReadResult,
  Session,
  SessionListQuery,
  SessionStats,
} from "./session.ts";
import { isTerminal, MAX_PROMPT_BYTES } from "./session.ts";

/** Where memoryKeys come from; the memory bridge provides it. */
export interface MemoryReader {
  get(key: string): { key: string; value: string } | null;
}

/** How long `/read` waits for the agent to flush a finished turn to its transcript. */
const READ_SETTLE_MS = 3_000;

export interface SessionServiceDeps {
  repo: SessionRepo;
  tmux: Tmux;
  agent: AgentAdapter;
  bus: EventBus;
  clock: Clock;
  logger: Logger;
  memory: MemoryReader;
  settings: {
    stateDir: string;
    hookBaseUrl: () => string;
    permissionMode: PermissionMode;
    stallThresholdMs: number;
    permissionTimeoutMs: number;
    maxSessions: number | null;
    delivery?: DeliveryOptions;
  };
}

export interface CreateResult {
  session: Session;
  created: boolean;
  reused: boolean;
  promptDelivery: DeliveryResult | null;
  warnings: string[];
}

export interface SessionService {
  list(query?: SessionListQuery): Session[];
  get(id: string): Session;
  stats(): SessionStats;
  create(input: CreateSessionInput): Promise<CreateResult>;
  send(id: string, text: string): Promise<DeliveryResult>;
  answer(id: string, approve: boolean, permissionId?: string): Promise<Session>;
  interrupt(id: string): Promise<Session>;
  escape(id: string): Promise<Session>;
  kill(id: string): Promise<Session>;
  pane(id: string): Promise<{ id: string; content: string }>;
  read(id: string): Promise<ReadResult>;
  setPolicy(id: string, policy: Omit<PermissionPolicy, "profile">): PermissionPolicy;
  setProfile(id: string, profile: PermissionProfile): PermissionPolicy;
  cursor(id: string, query: CursorQuery): Promise<TranscriptCursorPage>;
  /** The live session (running in a window), or SESSION_NOT_FOUND. */
  live(id: string): LiveSession;
  /** Every live session ag follows (for the supervisor). */
  all(): LiveSession[];
  /** Starts following a stored session whose window exists (creation and re-adoption). */
  follow(record: SessionRecord, booting: boolean): LiveSession;
  forget(id: string): void;
}

export function createSessionService(deps: SessionServiceDeps): SessionService {
  const live = new Map<string, LiveSession>();
  const queues = new Map<string, Promise<unknown>>();
  const delivery = deps.settings.delivery ?? DEFAULT_DELIVERY;

  function record(id: string): SessionRecord {
    const found = deps.repo.get(id);
    if (!found) throw new AgError("SESSION_NOT_FOUND", `no session ${id}`);
    return found;
  }

  function running(id: string): LiveSession {
    const session = live.get(id);
    if (!session || isTerminal(session.record().status))
      throw new AgError("SESSION_NOT_FOUND", `no running session ${id}`);
    return session;
  }

  /** One keyboard at a time per session: deliveries and key presses never interleave. */
  function exclusive<T>(id: string, work: () => Promise<T>): Promise<T> {
    const previous = queues.get(id) ?? Promise.resolve();
    const next = previous.then(work, work);
    queues.set(
      id,
      next.catch(() => {}),
    );
    return next;
  }

  function follow(rec: SessionRecord, booting: boolean): LiveSession {
    const existing = live.get(rec.id);
    if (existing) return existing;
    const session = createLiveSession(
      rec,
      { ...deps, permissionTimeoutMs: deps.settings.permissionTimeoutMs },
      booting,
    );
    live.set(rec.id, session);
    return session;
  }

  async function launch(input: CreateSessionInput, warnings: string[]): Promise<LiveSession> {
    const liveCount = deps.repo.stats().active;
    if (deps.settings.maxSessions !== null && liveCount >= deps.settings.maxSessions) {
      throw new AgError(
        "SESSION_LIMIT_REACHED",
        `the limit of ${deps.settings.maxSessions} concurrent sessions is reached`,
      );
    }
    const id = randomUUID();
    const rec = newRecord({
      id,
      name: input.name ?? defaultName(input.workDir, id),
      workDir: input.workDir,
      agentCommand: input.agentCommand ?? null,
      permissionMode: input.permissionMode ?? deps.settings.permissionMode,
      stallThresholdMs: deps.settings.stallThresholdMs,
      now: deps.clock.now(),
    });
    const plan = await deps.agent.prepareLaunch({
      sessionId: id,
      workDir: rec.workDir,
      permissionMode: rec.permissionMode,
      agentCommand: rec.agentCommand,
      sessionDir: sessionDir(deps.settings.stateDir, id),
      hookBaseUrl: deps.settings.hookBaseUrl(),
      hookSecret: rec.hookSecret,
      env: {},
    });
    warnings.push(...plan.warnings);
    deps.repo.insert(rec);
    const session = follow(rec, true);
    try {
      const pane = await deps.tmux.newWindow({
        tag: id,
        name: rec.name,
        cwd: rec.workDir,
        command: plan.command,
        env: plan.env,
      });
      deps.repo.update(id, { windowId: pane.windowId, paneId: pane.paneId });
    } catch (error) {
      session.observe({ kind: "gone" }, "ag");
      throw new AgError("TMUX_UNAVAILABLE", `could not open a tmux window: ${(error as Error).message}`, {
        cause: error,
      });
    }
    const stored = deps.repo.get(id)!;
    live.delete(id);
    const started = follow(stored, true);
    deps.bus.publish({
      event: "session.created",
      session: { id, name: stored.name, workDir: stored.workDir },
      detail: `session ${stored.name} created`,
      meta: { permissionMode: stored.permissionMode, agentCommand: stored.agentCommand },
    });
    void started.readScreen();
    return started;
  }

  function reusable(input: CreateSessionInput): SessionRecord | null {
    const candidates = deps.repo
      .list({ status: "idle" })
      .filter((s) => s.workDir === input.workDir)
      .filter((s) => input.agentCommand === undefined || s.agentCommand === input.agentCommand)
      .filter((s) => input.permissionMode === undefined || s.permissionMode === input.permissionMode)
      .filter((s) => live.has(s.id))
      .sort((a, b) => b.lastActivityAt.localeCompare(a.lastActivityAt));
    return candidates[0] ?? null;
  }

  function promptOf(input: CreateSessionInput, warnings: string[]): string | undefined {
    if (input.prompt === undefined) return undefined;
    const memories = [];
    for (const key of input.memoryKeys ?? []) {
      const entry = deps.memory.get(key);
      if (entry) memories.push(entry);
      else warnings.push(`memory key not found: ${key}`);
    }
    return withMemoryContext(normalizeText(input.prompt, "prompt"), memories);
  }

  function storePolicy(id: string, policy: PermissionPolicy): PermissionPolicy {
    const rec = record(id);
    deps.repo.update(id, { permissions: policy, updatedAt: new Date(deps.clock.now()).toISOString() });
    deps.logger.info(`session ${rec.name}: permission policy ${policy.profile}`, policy);
    return policy;
  }

  /** The live session's transcript, or, for one that ended, a reading of its file as history. */
  async function transcriptOf(id: string): Promise<TranscriptFollower | null> {
    const rec = record(id);
    const session = live.get(id);
    if (session) {
      if (!session.transcript.path) {
        const found = await deps.agent.transcript.find(rec.workDir, id);
        if (found) await session.attachTranscript(found, false);
      }
      return session.transcript;
    }
    const path = rec.transcriptPath ?? (await deps.agent.transcript.find(rec.workDir, id));
    if (!path) return null;
    const follower = createTranscriptFollower({ agent: deps.agent, logger: deps.logger, onLine: () => {} });
    await follower.attach(path, true);
    follower.stop();
    return follower;
  }

  async function deliver(session: LiveSession, text: string): Promise<DeliveryResult> {
    return exclusive(session.id, () => deliverTo(session, deps.tmux, deps.agent, deps.clock, text, delivery));
  }

  return {
    list: (query) => deps.repo.list(query).map(toSession),
    get: (id) => toSession(record(id)),
    stats: () => deps.repo.stats(),
    live: running,
    all: () => [...live.values()],
    follow,
    forget(id) {
      live.get(id)?.dispose();
      live.delete(id);
    },

    async create(input) {
      validateWorkDir(input.workDir);
      const warnings: string[] = [];
      const prompt = promptOf(input, warnings);
      const existing = reusable(input);
      if (existing) {
        const session = running(existing.id);
        const promptDelivery = prompt === undefined ? null : await deliver(session, prompt);
        return {
          session: toSession(record(existing.id)),
          created: false,
          reused: true,
          promptDelivery,
          warnings,
        };
      }
      const session = await launch(input, warnings);
      const promptDelivery = prompt === undefined ? null : await deliver(session, prompt);
      return {
        session: toSession(record(session.id)),
        created: true,
        reused: false,
        promptDelivery,
        warnings,
      };
    },

    async send(id, text) {
      const session = running(id);
      const status = session.record().status;
      if (status === "permission_prompt") {
        throw new AgError(
          "SESSION_BUSY",
          `session ${id} waits for a permission answer: approve or reject it first`,
        );
      }
      return deliver(session, normalizeText(text, "text"));
    },

    async answer(id, approve, permissionId) {
      const session = running(id);
      const pending = session.record().pendingPermission;
      if (!pending)
        throw new AgError("NO_PENDING_PERMISSION", `session ${id} has no pending permission prompt`);
      if (permissionId !== undefined && permissionId !== pending.id) {
        throw new AgError(
          "PERMISSION_MISMATCH",
          `the pending permission is ${pending.id}, not ${permissionId}`,
        );
      }
      const keys = approve ? deps.agent.keys.approve(pending.kind) : deps.agent.keys.reject(pending.kind);
      await exclusive(id, () => pressEach(session, keys, deps.clock));
      return toSession(record(id));
    },

    async interrupt(id) {
      const session = running(id);
      if (session.record().status === "idle")
        throw new AgError("CONFLICT", `session ${id} is idle: nothing to interrupt`);
      await exclusive(id, () => session.sendKeys(deps.agent.keys.interrupt));
      return toSession(record(id));
    },

    async escape(id) {
      const session = running(id);
      await exclusive(id, () => session.sendKeys(deps.agent.keys.escape));
      return toSession(record(id));
    },

    async kill(id) {
      const rec = record(id);
      if (isTerminal(rec.status))
        throw new AgError("SESSION_NOT_FOUND", `session ${id} has already ended (${rec.status})`);
      const session = live.get(id);
      session?.markKilled();
      if (rec.windowId) await deps.tmux.killWindow(rec.windowId).catch(() => {});
      const at = new Date(deps.clock.now()).toISOString();
      deps.repo.update(id, {
        status: "killed",
        pendingPermission: null,
        updatedAt: at,
        endedAt: at,
        endReason: "killed",
      });
      const info = { id, name: rec.name, workDir: rec.workDir };
      deps.bus.publish({
        event: "session.killed",
        session: info,
        detail: `session ${rec.name} killed`,
        meta: {},
      });
      deps.bus.publish({
        event: "session.ended",
        session: info,
        detail: "killed",
        meta: { reason: "killed" },
      });
      session?.dispose();
      live.delete(id);
      return toSession(record(id));
    },

    setPolicy(id, policy) {
      return storePolicy(id, { profile: "custom", ...policy });
    },

    setProfile(id, profile) {
      return storePolicy(id, { profile, ...PROFILES[profile] });
    },

    async read(id) {
      const transcript = await transcriptOf(id);
      const status = record(id).status;
      // A turn that is over by the hooks may not be fully written down yet: wait for it, briefly.
      if (transcript && status !== "working" && status !== "stalled")
        await transcript.settled(READ_SETTLE_MS);
      const rec = record(id);
      const tokens = transcript?.tokens() ?? rec.tokenUsage;
      return {
        id,
        status: rec.status,
        output: transcript?.output() ?? "",
        tokenUsage: { input: tokens.input, output: tokens.output },
      };
    },

    async cursor(id, query) {
      const transcript = await transcriptOf(id);
      return transcript
        ? transcript.page(query)
        : { messages: [], has_more: false, oldest_id: 0, newest_id: 0 };
    },

    async pane(id) {
      const rec = record(id);
      if (!rec.paneId || isTerminal(rec.status))
        throw new AgError("SESSION_NOT_FOUND", `session ${id} has no pane`);
      return { id, content: await deps.tmux.capturePane(rec.paneId) };
    },
  };
}

/**
 * CONTRACT §2's profiles. "Bash asks" (standard) means ag does not refuse it and the agent's
 * own permission prompt decides, as for "full": ag's policies only ever deny.
 */
const PROFILES: Record<PermissionProfile, Omit<PermissionPolicy, "profile">> = {
  readonly: { allowRead: true, allowWrite: false, allowBash: false },
  standard: { allowRead: true, allowWrite: true, allowBash: true },
  full: { allowRead: true, allowWrite: true, allowBash: true },
};

/**
 * CRLF is a line break typed on another system: one newline. Other control characters are
 * refused, and so is text over 256 KiB (CONTRACT §2).
 */
function normalizeText(text: string, field: string): string {
  const bytes = Buffer.byteLength(text);
  if (bytes > MAX_PROMPT_BYTES) {
    throw new AgError("PAYLOAD_TOO_LARGE", `${field} is ${bytes} bytes; the limit is ${MAX_PROMPT_BYTES}`);
  }
  const normalized = text.replace(/\r\n/g, "\n");
  assertTypeable(normalized, field);
  return normalized;
}

async function pressEach(session: LiveSession, keys: string[], clock: Clock): Promise<void> {
  for (const [i, key] of keys.entries()) {
    if (i > 0) await new Promise<void>((resolve) => clock.setTimer(resolve, 150));
    await session.sendKeys([key]);
  }
}
