import type { EventName } from "../events/names.ts";
import type { Observation, ObservationSource } from "./observation.ts";
import type { PendingPermission, SessionStatus } from "./session.ts";

/**
 * The state fusion: (state, observation) → state, pure. One writer applies it in order per
 * session. Strength of evidence: hooks, then transcript, then screen. The screen may overrule
 * the others only where no hook fires (an interrupt, a rejected prompt, a missed hook), and only
 * after it has said the same thing for CONFIRM_MS with no stronger evidence since: a single
 * stale frame must never turn a working agent "idle".
 */

export const CONFIRM_MS = 1500;

export interface StatusState {
  status: SessionStatus;
  pending: PendingPermission | null;
  /** Last sign of life of the agent (hook, transcript line, screen content change). */
  lastActivityAt: number;
  /** Last hook or transcript observation: they outrank the screen for CONFIRM_MS. */
  lastStrongAt: number;
  /** Since when the screen has contradicted the status (null when it agrees), and what it says. */
  screenDisagreesSince: number | null;
  screenSays: "working" | "idle" | null;
  /** The status before a stall, restored on recovery. */
  stalledFrom: SessionStatus | null;
  stallThresholdMs: number;
  permissionCount: number;
  /** Launched, UI not shown yet: the first idle screen means ready, no confirmation needed. */
  booting: boolean;
}

export interface Transition {
  state: StatusState;
  events: EventName[];
  /** When the state should be looked at again even if nothing is observed (confirmation, stall). */
  recheckAt: number | null;
  detail?: string;
}

export function initialStatus(
  now: number,
  stallThresholdMs: number,
  status: SessionStatus = "working",
  booting = false,
): StatusState {
  return {
    booting,
    status,
    pending: null,
    lastActivityAt: now,
    lastStrongAt: now,
    screenDisagreesSince: null,
    screenSays: null,
    stalledFrom: null,
    stallThresholdMs,
    permissionCount: 0,
  };
}

const TERMINAL: ReadonlySet<SessionStatus> = new Set(["killed", "completed", "crashed"]);

export function reduce(
  prev: StatusState,
  obs: Observation,
  source: ObservationSource,
  now: number,
): Transition {
  if (TERMINAL.has(prev.status)) return { state: prev, events: [], recheckAt: null };
  const strong = source === "hook" || source === "transcript";
  let state: StatusState = { ...prev };
  if (strong) state.lastStrongAt = now;
  if (obs.kind !== "tick" && obs.kind !== "starting" && (strong || obs.kind === "activity"))
    state.lastActivityAt = now;

  const extra: EventName[] = [];
  let detail: string | undefined;
  if (state.booting && endsBoot(obs)) {
    state.booting = false;
    if (obs.kind === "screen-idle") state = enter(state, "idle");
  }
  switch (obs.kind) {
    case "prompt-submitted":
      state = enter(state, "working");
      break;
    case "activity":
      // A tool starting after a permission prompt means it was answered: the agent works again.
      if (obs.working) state = enter(state, "working");
      break;
    case "permission":
      state = enterPermission(state, obs.request);
      break;
    case "turn-ended":
      state = enter(state, "idle");
      break;
    case "turn-failed":
      extra.push(obs.rateLimited ? "status.rate_limited" : "status.error");
      detail = obs.error;
      state = enter(state, "idle");
      break;
    case "session-ended":
      // Not an end by itself: `claude --resume` was seen sending SessionEnd (reason "other")
      // while it kept running. The process exiting (pane death, exit screen) ends the session.
      detail = obs.reason;
      break;
    case "exited":
      detail = obs.status === 0 ? "agent exited" : `agent exited with status ${obs.status ?? "unknown"}`;
      state = enter(state, obs.status === 0 ? "completed" : "crashed");
      break;
    case "gone":
      detail = "the agent's window disappeared";
      state = enter(state, "crashed");
      break;
    case "screen-working":
      state = fromScreen(state, "working", now);
      break;
    case "screen-idle":
      state =
        obs.interrupted && state.status === "working" ? enter(state, "idle") : fromScreen(state, "idle", now);
      break;
    case "starting":
    case "tick":
      state = confirmScreen(state, now);
      break;
  }
  state = checkStall(state, obs, now);
  const events = [...transitionEvents(prev, state), ...extra];
  return { state, events, recheckAt: nextCheck(state, now), detail };
}

/** Start-up ends with the first sign of a usable agent, not with screen noise while it loads. */
function endsBoot(obs: Observation): boolean {
  if (obs.kind === "activity") return obs.working;
  return obs.kind !== "tick" && obs.kind !== "starting" && obs.kind !== "screen-working";
}

function enter(state: StatusState, status: SessionStatus): StatusState {
  // Staying in the same status keeps a running screen disagreement: the hook restarts its
  // confirmation window (through lastStrongAt) without forgetting what the screen said.
  if (status === state.status && status !== "stalled") return state;
  return {
    ...state,
    status,
    pending: status === "permission_prompt" || status === "asking" ? state.pending : null,
    screenDisagreesSince: null,
    screenSays: null,
    stalledFrom: null,
  };
}

function enterPermission(state: StatusState, request: Omit<PendingPermission, "id">): StatusState {
  const status: SessionStatus = request.kind === "question" ? "asking" : "permission_prompt";
  const same =
    state.pending && state.pending.kind === request.kind && state.pending.detail === request.detail;
  if (same && state.status === status) return { ...state, screenDisagreesSince: null, screenSays: null };
  const count = state.permissionCount + 1;
  const pending: PendingPermission = { id: `perm-${count}`, ...request };
  return { ...enter(state, status), pending, permissionCount: count };
}

/**
 * The screen says `seen`. If that matches the status, any disagreement ends. If not, the screen
 * wins only once it has said so for CONFIRM_MS and no hook or transcript line spoke since.
 */
function fromScreen(state: StatusState, seen: "working" | "idle", now: number): StatusState {
  const agrees =
    state.status === seen ||
    (seen === "working" && state.status === "stalled" && state.stalledFrom === "working");
  if (agrees) return { ...state, screenDisagreesSince: null, screenSays: null };
  const since = state.screenSays === seen ? (state.screenDisagreesSince ?? now) : now;
  return confirmScreen({ ...state, screenDisagreesSince: since, screenSays: seen }, now);
}

function confirmScreen(state: StatusState, now: number): StatusState {
  if (state.screenDisagreesSince === null || state.screenSays === null) return state;
  const quietSince = Math.max(state.screenDisagreesSince, state.lastStrongAt);
  return now - quietSince < CONFIRM_MS ? state : enter(state, state.screenSays);
}

function checkStall(state: StatusState, obs: Observation, now: number): StatusState {
  const lively = obs.kind !== "tick" && obs.kind !== "starting" && state.lastActivityAt === now;
  if (state.status === "stalled" && lively && state.stalledFrom) {
    return { ...state, status: state.stalledFrom, stalledFrom: null };
  }
  if (state.status === "working" && now - state.lastActivityAt >= state.stallThresholdMs) {
    return { ...state, status: "stalled", stalledFrom: "working" };
  }
  return state;
}

function nextCheck(state: StatusState, now: number): number | null {
  const checks: number[] = [];
  if (state.screenDisagreesSince !== null) {
    checks.push(Math.max(state.screenDisagreesSince, state.lastStrongAt) + CONFIRM_MS);
  }
  if (state.status === "working") checks.push(state.lastActivityAt + state.stallThresholdMs);
  const next = checks.length ? Math.min(...checks) : null;
  return next === null ? null : Math.max(next, now + 1);
}

const ENTER_EVENTS: Partial<Record<SessionStatus, EventName[]>> = {
  working: ["session.working", "status.working"],
  idle: ["session.idle", "status.idle"],
  asking: ["status.question"],
  stalled: ["session.stalled", "status.stall"],
  completed: ["session.ended"],
  crashed: ["status.dead", "session.ended"],
};

function transitionEvents(prev: StatusState, next: StatusState): EventName[] {
  const events: EventName[] = [];
  const newPermission = next.pending !== null && next.pending.id !== prev.pending?.id;
  if (prev.status === next.status && !newPermission) return events;
  if (prev.status === "stalled" && next.status !== "stalled") events.push("status.recovered");
  if (next.status === "permission_prompt") {
    events.push("permission.requested", next.pending?.kind === "plan" ? "status.plan" : "status.permission");
    return events;
  }
  if (next.status === "asking") events.push("permission.requested");
  return [...events, ...(ENTER_EVENTS[next.status] ?? [])];
}
