import type { Observation, ObservationSource } from "../../drivers/observation.ts";
import { isTerminal, type PendingPermission, type SessionStatus } from "../session.ts";
import { transitionEvents } from "./fusion/events.ts";
import { CATCH_UP_MS, CONFIRM_MS, readScreen } from "./fusion/screen.ts";
import { isDialog, type StatusState, type Step, type Transition } from "./fusion/state.ts";
import { apply } from "./fusion/strong.ts";

export { describeDialog, sameDialog } from "./fusion/dialogs.ts";
export { ANSWER_GRACE_MS, CATCH_UP_MS, CONFIRM_MS } from "./fusion/screen.ts";
export type { StatusState, Transition, TurnEnd } from "./fusion/state.ts";

/**
 * The state fusion: (state, observation, its source, when it was true) → state, pure. One writer
 * applies it per session (live/writer.ts). docs/sessions.md holds the table of which evidence may
 * end which state; in short:
 *
 * - Hooks, transcript lines and ag's own keys are strong: they set the status as they arrive.
 * - The screen is weak and late: a frame is only a picture of some moment after its capture began.
 *   It may contradict the status only once it has caught up with the evidence that set it (a frame
 *   showed what that evidence claims), or when ag's own keys made it the judge, or when it has
 *   not caught up for CATCH_UP_MS (a lost hook). Even then it decides only when a frame captured
 *   CONFIRM_MS after the first contradicting one still says the same (a fresh read, asked for).
 * - A frame captured before the evidence that set the status never overrules it.
 * - A permission or question ends by a hook or transcript sign that it was answered, by ag's
 *   own keys, or by the screen showing its dialog gone after having shown it. Never by a timer.
 * - A dialog on screen that the status does not know raises it (a missed hook), unless it is one
 *   just answered that the agent has not redrawn yet.
 */

export function initialStatus(
  now: number,
  stallThresholdMs: number,
  status: SessionStatus = "working",
  options: {
    booting?: boolean;
    pending?: PendingPermission | null;
    adopted?: boolean;
    /** Makes this run's permission ids its own (perm-3-k7q2): an id from before a restart never matches. */
    idTag?: string;
  } = {},
): StatusState {
  return {
    status,
    pending: options.pending ?? null,
    since: now,
    lastActivityAt: now,
    stallThresholdMs,
    // A session adopted while stalled was working before it went quiet.
    stalledFrom: status === "stalled" ? "working" : null,
    permissionCount: Number(options.pending?.id.match(/^perm-(\d+)/)?.[1] ?? 0),
    booting: options.booting ?? false,
    screenCaughtUp: false,
    // A status read back from the database after a restart is nobody's current evidence.
    screenJudges: options.adopted ?? false,
    interruptedByAg: false,
    idTag: options.idTag ?? "",
    disagreement: null,
    dialogSeen: false,
    dialogSeenAt: null,
    pendingFromHook: false,
    pendingToolUseId: null,
    lastToolStart: null,
    answered: null,
    // Mid-turn unless launched just now or waiting for a prompt (an adopted session may be).
    turnOpen: !options.booting && (status === "working" || status === "stalled" || isDialog(status)),
    failureAnnounced: false,
  };
}

const STRONG: ReadonlySet<ObservationSource> = new Set(["hook", "transcript", "ag", "acp"]);
/** Strong observations that say what the agent is doing (not only that it is alive). */
const SAYS_STATE: ReadonlySet<Observation["kind"]> = new Set([
  "prompt-submitted",
  "tool",
  "permission",
  "waiting-for-input",
  "turn-ended",
  "turn-failed",
  "keys",
]);

export function reduce(
  prev: StatusState,
  obs: Observation,
  source: ObservationSource,
  at: number,
): Transition {
  if (isTerminal(prev.status)) {
    if (obs.kind !== "launched")
      return { state: prev, events: [], meta: {}, recheckAt: null, rereadAt: null, catchUpAt: null };
    // An ended session resumed: a new life under the same id.
    const state = {
      ...initialStatus(at, prev.stallThresholdMs, "working", { booting: true, idTag: prev.idTag }),
      permissionCount: prev.permissionCount,
    };
    return {
      state,
      events: ["session.created"],
      meta: { "session.created": obs.origin },
      detail: obs.detail,
      recheckAt: nextCheck(state),
      rereadAt: null,
      catchUpAt: null,
    };
  }
  const step: Step = { state: { ...prev }, lead: [], events: [], meta: {}, rereadAt: null };
  const s = step.state;
  if (STRONG.has(source) || obs.kind === "activity" || obs.kind === "input-recorded")
    s.lastActivityAt = Math.max(s.lastActivityAt, at);
  // A word from the agent (or ag) about the state restarts a running confirmation of the screen
  // (a bare sign of life does not contradict it); a fresh look then follows CONFIRM_MS later.
  if (STRONG.has(source) && SAYS_STATE.has(obs.kind) && s.disagreement) {
    s.disagreement = null;
    step.rereadAt = at + CONFIRM_MS;
  }
  if (source === "screen") readScreen(step, obs, at);
  else apply(step, obs, source, at);
  checkStall(step, obs, at);
  const state = step.state;
  const events = [...step.lead, ...transitionEvents(prev, state, step.turnEnd), ...step.events];
  const meta = { ...step.meta };
  if (step.turnEnd) meta["session.turn_ended"] = { reason: step.turnEnd };
  return {
    state,
    events,
    meta,
    detail: step.detail,
    details: step.details,
    endReason: step.endReason,
    recheckAt: nextCheck(state),
    rereadAt: nextReread(state, step.rereadAt),
    catchUpAt: nextCatchUp(state),
  };
}

function checkStall(step: Step, obs: Observation, at: number): void {
  const s = step.state;
  const lively = obs.kind !== "tick" && obs.kind !== "starting" && s.lastActivityAt === at;
  if (s.status === "stalled" && lively && s.stalledFrom) {
    s.status = s.stalledFrom;
    s.stalledFrom = null;
    return;
  }
  if (s.status === "working" && at - s.lastActivityAt >= s.stallThresholdMs) {
    s.status = "stalled";
    s.stalledFrom = "working";
  }
}

function nextCheck(s: StatusState): number | null {
  return s.status === "working" ? s.lastActivityAt + s.stallThresholdMs : null;
}

/** When the screen should be captured afresh: a confirmation due, or a look asked for. */
function nextReread(s: StatusState, asked: number | null): number | null {
  const due = s.disagreement ? s.disagreement.since + CONFIRM_MS : null;
  if (asked === null) return due;
  return due === null ? asked : Math.min(asked, due);
}

/** A state the screen has not shown: a look when the screen may judge it (a lost hook). */
function nextCatchUp(s: StatusState): number | null {
  // A disagreement being confirmed has its own re-read (nextReread).
  if (isDialog(s.status) || s.booting || s.screenCaughtUp || s.screenJudges || s.disagreement) return null;
  return s.since + CATCH_UP_MS;
}
