import type { Observation, ObservationSource } from "../../drivers/observation.ts";
import type { EventBus, EventInput, EventSession } from "../../events/bus.ts";
import type { StatusEventName, StatusExtra, StatusMeta } from "../../events/names.ts";
import type { Clock } from "../../shared/clock.ts";
import type { Logger } from "../../shared/log.ts";
import type { SessionRecord, SessionRepo } from "../repo.ts";
import { isTerminal, type PendingPermission } from "../session.ts";
import { type LiveStats, pushSample, type StatsRecorder } from "./stats.ts";
import { reduce, type StatusState, type Transition } from "./status.ts";

/** lastActivityAt alone (no change of state) is saved at most this often. */
const ACTIVITY_SAVE_MS = 1_000;

export interface StatusWriter {
  readonly state: StatusState;
  /** Reduces, saves what changed, then publishes the transition's events, in that order. */
  apply(observation: Observation, source: ObservationSource, at: number): Applied;
}

export interface Applied extends Transition {
  previous: StatusState;
  /** The status or the pending dialog changed, or events were published. */
  changed: boolean;
}

/**
 * The one writer of a session's status (an architecture test keeps it so): every transition,
 * from a hook to a kill, is an observation it reduces, saves and publishes, so every change has
 * its event and no other module decides a session's state.
 */
export function createStatusWriter(
  deps: {
    /** The session as ag holds it; `saved` replaces it after each write. */
    record(): SessionRecord;
    saved(record: SessionRecord): void;
    repo: Pick<SessionRepo, "saveStatus" | "get">;
    bus: EventBus;
    clock: Clock;
    logger: Logger;
    stats: LiveStats;
    recorder?: StatsRecorder;
    /**
     * What a turn's end waits for before it is told: the turn's last transcript lines read and
     * their messages published (bounded). Null: nothing to wait for (no transcript).
     */
    beforeTurnEnd?(): Promise<void> | null;
  },
  initial: StatusState,
): StatusWriter {
  let state = initial;
  let activitySavedAt = initial.lastActivityAt;
  /** Events held back behind a turn's end; null when none are. */
  let outbox: Promise<void> | null = null;

  function save(previous: StatusState, transition: Transition): void {
    const now = deps.clock.now();
    const at = new Date(now).toISOString();
    const terminal = transition.endReason !== undefined;
    const record = deps.record();
    // An ending session says why; an ended one resumed starts over; any other keeps what it had.
    const resumed = isTerminal(previous.status) && !isTerminal(state.status);
    const end = terminal
      ? { endedAt: at, endReason: transition.endReason ?? null }
      : resumed
        ? { endedAt: null, endReason: null }
        : { endedAt: record.endedAt, endReason: record.endReason };
    deps.repo.saveStatus(record.id, {
      status: state.status,
      pendingPermission: state.pending,
      updatedAt: at,
      lastActivityAt: new Date(state.lastActivityAt).toISOString(),
      ...end,
    });
    activitySavedAt = state.lastActivityAt;
    deps.saved(deps.repo.get(record.id) ?? record);
  }

  /**
   * A state the store did not take is not the state: ag keeps the one on record (a kill whose
   * record failed leaves the session running and recorded as running) and the caller hears why.
   */
  function saveOrUndo(previous: StatusState, transition: Transition): void {
    try {
      save(previous, transition);
    } catch (error) {
      state = previous;
      throw error;
    }
  }

  function publish(previous: StatusState, transition: Transition, source: ObservationSource): void {
    const record = deps.record();
    const session = { id: record.id, name: record.name, workDir: record.workDir };
    const base: StatusMeta = {
      status: state.status,
      previous: previous.status,
      pendingPermission: state.pending,
      source,
    };
    const events = transition.events.map((event) => {
      const detail =
        transition.details?.[event] ?? transition.detail ?? `${previous.status} → ${state.status}`;
      return statusEvent(event, session, detail, base, transition.meta[event]);
    });
    const endsTurn = transition.events.includes("session.turn_ended");
    send(events, endsTurn ? (deps.beforeTurnEnd?.() ?? null) : null);
  }

  /**
   * Publishes at once, unless a turn's end waits for its last messages (then its events go once
   * they are out) or events are already held back (then these go after them): in causal order.
   */
  function send(events: EventInput[], wait: Promise<void> | null): void {
    if (!wait && !outbox) {
      for (const event of events) deps.bus.publish(event);
      return;
    }
    const sent = Promise.all([outbox, wait])
      .catch((error) => deps.logger.warn(`session ${deps.record().id}: waiting for the turn's text`, error))
      .then(() => {
        for (const event of events) deps.bus.publish(event);
      });
    outbox = sent;
    void sent.then(() => {
      if (outbox === sent) outbox = null;
    });
  }

  function measure(previous: StatusState, source: ObservationSource): void {
    const now = deps.clock.now();
    const stats = deps.stats;
    stats.timeInState[previous.status] =
      (stats.timeInState[previous.status] ?? 0) + (now - stats.statusSince);
    stats.statusSince = now;
    // Hooks and transcript lines change the state as they arrive; the screen after its wait.
    const evidence = previous.disagreement?.since;
    const detectionMs = source === "screen" && evidence !== undefined ? Math.max(0, now - evidence) : 0;
    pushSample(stats.detectionMs, detectionMs);
    deps.recorder?.detection(detectionMs);
  }

  return {
    get state() {
      return state;
    },
    apply(observation, source, at) {
      const previous = state;
      const transition = reduce(state, observation, source, at);
      state = transition.state;
      const statusChanged = state.status !== previous.status;
      const changed =
        statusChanged || !samePending(previous.pending, state.pending) || transition.events.length > 0;
      if (changed) {
        const why = transition.detail ? `: ${transition.detail}` : "";
        deps.logger.debug(
          `session ${deps.record().id}: ${previous.status} → ${state.status} (${source} ${observation.kind}${why})`,
        );
        saveOrUndo(previous, transition);
        if (statusChanged) measure(previous, source);
        publish(previous, transition, source);
      } else if (state.lastActivityAt - activitySavedAt >= ACTIVITY_SAVE_MS) {
        saveOrUndo(previous, transition);
      }
      return { ...transition, previous, changed };
    },
  };
}

/**
 * A status event: the catalog defines each one's payload as StatusMeta plus its extra (the
 * fusion's `meta` for it, typed per event), which TypeScript cannot follow through a union of
 * names, hence the one cast.
 */
function statusEvent<N extends StatusEventName>(
  event: N,
  session: EventSession,
  detail: string,
  base: StatusMeta,
  extra: StatusExtra<N> | undefined,
): EventInput<N> {
  return { event, session, detail, meta: { ...base, ...extra } } as EventInput<N>;
}

function samePending(a: PendingPermission | null, b: PendingPermission | null): boolean {
  return a === b || (a !== null && b !== null && JSON.stringify(a) === JSON.stringify(b));
}
