import { statSync } from "node:fs";
import type { AgentRegistry } from "../../agents/registry.ts";
import type { SessionDrivers } from "../../drivers/index.ts";
import type { EventBus } from "../../events/bus.ts";
import { STATUS_EVENT_NAMES, type StatusEventName, type Waker } from "../../events/names.ts";
import type { Clock } from "../../shared/clock.ts";
import type { Logger } from "../../shared/log.ts";
import type { AdmissionHold } from "../deps.ts";
import type { Exits } from "../exits.ts";
import { type LauncherDeps, launchSession } from "../launcher.ts";
import { newHookSecret } from "../lifecycle.ts";
import type { LiveSessions } from "../live/registry.ts";
import type { LiveSession } from "../live/session.ts";
import { createTimers } from "../live/timers.ts";
import type { SessionRecord, SessionRepo } from "../repo.ts";
import { isTerminal } from "../session.ts";
import { afterMsOf, type HibernationView, hibernatesAt } from "./rules.ts";

/**
 * Hibernation (docs/hibernation.md): an idle session's agent is ended once its conversation is
 * on disk, the session staying listed, idle and readable; the next prompt, answer, fork or
 * terminal starts its agent again on its own conversation. One timer per session, set from its
 * changes of state (no loop looks at every session).
 */
export interface Hibernation {
  /**
   * Starts the agent of a hibernated session again (nothing to do for one that runs), resolving
   * once it has started. Concurrent callers share one wake-up.
   */
  awake(id: string, by: Waker): Promise<void>;
  /** A live terminal watches the session: it stays up until every hold is released. */
  hold(id: string): () => void;
  /** At start, after the drivers followed their sessions: every timer set. */
  start(): void;
  stop(): void;
}

export interface HibernationDeps {
  repo: Pick<SessionRepo, "get" | "update" | "live">;
  live: Pick<LiveSessions, "get" | "forget" | "all">;
  drivers: Pick<SessionDrivers, "of">;
  agents: Pick<AgentRegistry, "get">;
  bus: EventBus;
  clock: Clock;
  logger: Pick<Logger, "info" | "warn">;
  exits: Pick<Exits, "gone">;
  launcher: LauncherDeps;
  /** Room for the woken agent, as for a create (the host guard); absent: none is asked. */
  admission?: (agent: string) => Promise<AdmissionHold>;
  settings: {
    /** The server's hibernateAfterMs; 0 turns hibernation off (a session's own setting still applies). */
    hibernateAfterMs: number;
    /** An idle session past this ends (idle_timeout), hibernated or not; 0 disables. */
    idleTimeoutMs: number;
  };
  /** Ends a hibernated session whose idle timeout came (the service's kill). */
  endIdle(id: string): Promise<unknown>;
}

/** How long the transcript may take to show the end of the last turn before hibernating. */
const SETTLE_MS = 2_000;
/** The transcript file must stay unchanged this long (size and time) to count as written. */
const STABLE_MS = 250;
const STABLE_TRIES = 8;
/** A conversation not yet on disk is looked at again this much later. */
const RETRY_MS = 30_000;

const STATUS_EVENTS: ReadonlySet<string> = new Set<StatusEventName>(STATUS_EVENT_NAMES);
const NO_ROOM_HELD: AdmissionHold = { bind() {}, release() {} };

export function createHibernation(deps: HibernationDeps): Hibernation {
  const timers = createTimers(deps.clock);
  const viewers = new Map<string, number>();
  const sleeping = new Map<string, Promise<void>>();
  const waking = new Map<string, Promise<void>>();
  let unsubscribe: (() => void) | null = null;

  function viewOf(session: LiveSession): HibernationView {
    const rec = session.record();
    const state = session.status();
    return {
      status: state.status,
      pending: state.pending,
      ownAfterMs: rec.hibernateAfterMs ?? null,
      serverAfterMs: deps.settings.hibernateAfterMs,
      viewers: viewers.get(session.id) ?? 0,
      resumable: deps.drivers.of(rec).resumes(session.agent),
    };
  }

  /** The session's timer, set again from its state now (cleared when it stays up). */
  function arm(id: string): void {
    const session = deps.live.get(id);
    const at = session ? hibernatesAt(viewOf(session), session.status().lastActivityAt) : null;
    timers.at(id, at, () => {
      const done = hibernate(id)
        .catch((error) => deps.logger.warn(`hibernating session ${id} failed`, error))
        .finally(() => sleeping.delete(id));
      sleeping.set(id, done);
    });
  }

  /** Resolves after `ms` on the injected clock. */
  const pause = (ms: number) => new Promise<void>((resolve) => deps.clock.setTimer(resolve, ms));

  /**
   * Whether the conversation is safely on disk: its transcript holds the end of the last prompt's
   * turn, and the file has stopped changing (`changing`: not yet). `none`: no transcript, nothing
   * to resume (the session's next change of state looks again).
   */
  async function onDisk(session: LiveSession): Promise<"written" | "changing" | "none"> {
    await session.settleTranscript(SETTLE_MS);
    const path = session.transcript.path;
    if (!path) return "none";
    let before = stamp(path);
    for (let tries = 0; tries < STABLE_TRIES; tries++) {
      await pause(STABLE_MS);
      const now = stamp(path);
      if (now !== null && now === before) return "written";
      before = now;
    }
    return "changing";
  }

  /** Its time has come: still kept awake by nothing, and idle for as long as it should be. */
  function due(session: LiveSession): boolean {
    if (deps.live.get(session.id) !== session) return false;
    const at = hibernatesAt(viewOf(session), session.status().lastActivityAt);
    return at !== null && at <= deps.clock.now();
  }

  async function hibernate(id: string): Promise<void> {
    const session = deps.live.get(id);
    if (!session || !due(session)) return arm(id);
    const idleSince = session.status().lastActivityAt;
    const conversation = await onDisk(session);
    if (conversation === "changing") timers.at(id, deps.clock.now() + RETRY_MS, () => arm(id));
    if (conversation !== "written") return;
    // One keyboard: a prompt being typed goes first, and then the session is no longer idle.
    const ended = await session.typing(async () => {
      if (!due(session) || session.status().lastActivityAt !== idleSince) return false;
      const rec = session.record();
      deps.live.forget(id);
      deps.repo.update(id, {
        hibernatedAt: new Date(deps.clock.now()).toISOString(),
        paneId: null,
        windowId: null,
      });
      // The session does not end: its driver only takes its agent (and window) away.
      await deps.drivers.of(rec).end(session, () => {});
      return true;
    });
    if (!ended) return arm(id);
    const afterMs = afterMsOf(viewOf(session)) ?? 0;
    const idleMs = Math.max(0, deps.clock.now() - idleSince);
    deps.bus.publish({
      event: "session.hibernated",
      session: refOf(session.record()),
      detail: `session ${session.record().name} hibernated after ${idleMs} ms idle: its agent was ended`,
      meta: { afterMs, idleMs },
    });
    deps.logger.info(`session ${id} hibernated`);
    armIdleEnd(session.record());
  }

  /** A hibernated session still ends when its idle timeout comes (as it would running). */
  function armIdleEnd(rec: SessionRecord): void {
    const timeout = deps.settings.idleTimeoutMs;
    if (timeout <= 0) return;
    timers.at(`end:${rec.id}`, Date.parse(rec.lastActivityAt) + timeout, () => {
      const now = deps.repo.get(rec.id);
      if (!now?.hibernatedAt || isTerminal(now.status)) return;
      void deps.endIdle(rec.id).catch((error) => deps.logger.warn(`idle timeout of ${rec.id}`, error));
    });
  }

  async function wake(rec: SessionRecord, by: Waker): Promise<void> {
    const started = deps.clock.now();
    timers.clear(`end:${rec.id}`);
    const room = (await deps.admission?.(rec.agent)) ?? NO_ROOM_HELD;
    try {
      room.bind(rec.id);
      // The ended agent may still be on its way out: one conversation is never run by two.
      await deps.exits.gone(rec.id);
      const agent = deps.agents.get(rec.agent, rec.agentVersion);
      const transcriptPath = rec.transcriptPath ?? (await agent.transcript.find(rec.workDir, rec.id));
      // A new secret: the hooks the ended agent sent last never reach the woken one.
      deps.repo.update(rec.id, { hibernatedAt: null, hookSecret: newHookSecret() });
      const record = deps.repo.get(rec.id) ?? rec;
      const session = await launchSession(deps.launcher, {
        record,
        resume: { conversationId: rec.id, fork: false, transcriptPath: transcriptPath ?? undefined },
        wake: true,
        warnings: [],
      });
      // What the conversation held before is history: it must not replay as new prompts.
      if (transcriptPath && session.transcript.path !== transcriptPath)
        await session.attachTranscript(transcriptPath, true);
    } catch (error) {
      room.release();
      throw error;
    }
    const wakeMs = Math.max(0, deps.clock.now() - started);
    deps.bus.publish({
      event: "session.woke",
      session: refOf(rec),
      detail: `session ${rec.name} woke (${by}): its agent resumed its conversation in ${wakeMs} ms`,
      meta: { by, wakeMs },
    });
  }

  function onEvent(name: string, id: string): void {
    if (name === "session.ended") {
      timers.clear(id);
      timers.clear(`end:${id}`);
      viewers.delete(id);
      if (deps.repo.get(id)?.hibernatedAt) deps.repo.update(id, { hibernatedAt: null });
      return;
    }
    if (STATUS_EVENTS.has(name)) arm(id);
  }

  return {
    async awake(id, by) {
      const inFlight = waking.get(id);
      if (inFlight) return inFlight;
      await sleeping.get(id);
      const rec = deps.repo.get(id);
      if (!rec?.hibernatedAt || isTerminal(rec.status)) return;
      const again = waking.get(id);
      if (again) return again;
      const done = wake(rec, by).finally(() => waking.delete(id));
      waking.set(id, done);
      return done;
    },

    hold(id) {
      viewers.set(id, (viewers.get(id) ?? 0) + 1);
      timers.clear(id);
      let held = true;
      return () => {
        if (!held) return;
        held = false;
        const left = (viewers.get(id) ?? 1) - 1;
        if (left > 0) viewers.set(id, left);
        else viewers.delete(id);
        arm(id);
      };
    },

    start() {
      unsubscribe = deps.bus.subscribe((event) => {
        if (event.session) onEvent(event.event, event.session.id);
      });
      for (const rec of deps.repo.live()) if (rec.hibernatedAt) armIdleEnd(rec);
      for (const session of deps.live.all()) arm(session.id);
    },

    stop() {
      unsubscribe?.();
      unsubscribe = null;
      timers.clearAll();
    },
  };
}

/** The transcript file's size and change time, or null when it cannot be read. */
function stamp(path: string): string | null {
  try {
    const stats = statSync(path);
    return `${stats.size}:${stats.mtimeMs}`;
  } catch {
    return null;
  }
}

function refOf(rec: Pick<SessionRecord, "id" | "name" | "workDir">) {
  return { id: rec.id, name: rec.name, workDir: rec.workDir };
}
