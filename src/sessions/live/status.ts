import type { PermissionRequest } from "../../agents/agent.ts";
import type { EventName } from "../../events/names.ts";
import { isTerminal, type PendingPermission, type SessionStatus } from "../session.ts";
import type { Observation, ObservationSource } from "./observation.ts";

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

export const CONFIRM_MS = 1500;
/** A status the screen never showed for this long may be judged by the screen (its hook was lost). */
export const CATCH_UP_MS = 10_000;
/**
 * A dialog answered but still on screen this long after is waiting again (the keys did not take).
 * The agent redraws within 30–250 ms of a key even with every core busy (measured).
 */
export const ANSWER_GRACE_MS = 5_000;

export type TurnEnd = "completed" | "failed" | "interrupted";
type View = "working" | "idle" | "dialog";

export interface StatusState {
  status: SessionStatus;
  pending: PendingPermission | null;
  /** The time of the evidence that set (or last affirmed) the status: older evidence cannot overrule it. */
  since: number;
  /** Last sign of life of the agent (hook, transcript line, screen content change): the stall clock. */
  lastActivityAt: number;
  stallThresholdMs: number;
  /** The status before a stall, restored on recovery. */
  stalledFrom: SessionStatus | null;
  permissionCount: number;
  /** Launched, UI not shown yet: the first idle screen means ready, no confirmation needed. */
  booting: boolean;
  /** A frame captured since `since` showed what the status claims. */
  screenCaughtUp: boolean;
  /** ag's own keys (or a re-adoption) left the outcome to the screen. */
  screenJudges: boolean;
  /** What the screen says against the status, since which capture. */
  disagreement: { view: "working" | "idle"; since: number } | null;
  /** The pending dialog has been on screen. */
  dialogSeen: boolean;
  /** The pending came from (or was confirmed by) a hook: a new hook request is a new dialog. */
  pendingFromHook: boolean;
  /** The tool use the pending permission is about, when known (the tool that started before it). */
  pendingToolUseId: string | null;
  lastToolStart: { tool: string; toolUseId: string } | null;
  /** The last dialog answered: frames still showing it are stale until the screen shows it gone. */
  answered: { request: PendingPermission; at: number; goneSeen: boolean } | null;
  /** A prompt was taken and its turn has not ended. */
  turnOpen: boolean;
  /** The API failure of this turn has been announced (one fact, one event). */
  failureAnnounced: boolean;
}

export interface Transition {
  state: StatusState;
  events: EventName[];
  /** Extra meta per event (session.ended's reason, session.turn_ended's reason, session.created's origin). */
  meta: Partial<Record<EventName, Record<string, unknown>>>;
  detail?: string;
  /** A detail of its own for an event, where the transition's does not fit (session.ended: its reason). */
  details?: Partial<Record<EventName, string>>;
  /** Why a terminal state was entered. */
  endReason?: string;
  /** When to look again even if nothing is observed (the stall check). */
  recheckAt: number | null;
  /** When to capture the screen again: a confirmation is due, an answer's grace is over. */
  rereadAt: number | null;
}

export function initialStatus(
  now: number,
  stallThresholdMs: number,
  status: SessionStatus = "working",
  options: { booting?: boolean; pending?: PendingPermission | null; adopted?: boolean } = {},
): StatusState {
  return {
    status,
    pending: options.pending ?? null,
    since: now,
    lastActivityAt: now,
    stallThresholdMs,
    stalledFrom: null,
    permissionCount: Number(options.pending?.id.match(/^perm-(\d+)$/)?.[1] ?? 0),
    booting: options.booting ?? false,
    screenCaughtUp: false,
    // A status read back from the database after a restart is nobody's current evidence.
    screenJudges: options.adopted ?? false,
    disagreement: null,
    dialogSeen: false,
    pendingFromHook: false,
    pendingToolUseId: null,
    lastToolStart: null,
    answered: null,
    // Mid-turn unless launched just now or waiting for a prompt (an adopted session may be).
    turnOpen: !options.booting && (status === "working" || status === "stalled" || isDialog(status)),
    failureAnnounced: false,
  };
}

/** Accumulates what one reduction says besides the state. */
interface Step {
  state: StatusState;
  /** Events before the transition's own (an idle timeout is told before the end). */
  lead: EventName[];
  events: EventName[];
  meta: Transition["meta"];
  detail?: string;
  details?: Transition["details"];
  endReason?: string;
  rereadAt: number | null;
  turnEnd?: TurnEnd;
}

const STRONG: ReadonlySet<ObservationSource> = new Set(["hook", "transcript", "ag"]);

export function reduce(
  prev: StatusState,
  obs: Observation,
  source: ObservationSource,
  at: number,
): Transition {
  if (isTerminal(prev.status)) {
    if (obs.kind !== "launched")
      return { state: prev, events: [], meta: {}, recheckAt: null, rereadAt: null };
    // An ended session resumed: a new life under the same id.
    const state = { ...initialStatus(at, prev.stallThresholdMs, "working", { booting: true }) };
    state.permissionCount = prev.permissionCount;
    return {
      state,
      events: ["session.created"],
      meta: { "session.created": obs.origin },
      detail: obs.detail,
      recheckAt: nextCheck(state),
      rereadAt: null,
    };
  }
  const step: Step = { state: { ...prev }, lead: [], events: [], meta: {}, rereadAt: null };
  const s = step.state;
  if (STRONG.has(source) || obs.kind === "activity") s.lastActivityAt = Math.max(s.lastActivityAt, at);
  // Any word from the agent (or ag) restarts a running confirmation of the screen.
  if (STRONG.has(source)) s.disagreement = null;
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
  };
}

// ── Strong evidence: hooks, transcript, ag, tmux ─────────────────────────────────────────────────

function apply(step: Step, obs: Observation, source: ObservationSource, at: number): void {
  const s = step.state;
  switch (obs.kind) {
    case "prompt-submitted":
      // A dialog hides the input box: a prompt line read while one waits was written before it.
      if (source === "transcript" && isDialog(s.status)) return;
      closePending(s, at);
      enter(step, "working", at);
      s.turnOpen = true;
      s.failureAnnounced = false;
      s.booting = false;
      return;
    case "tool":
      if (obs.phase === "started" && obs.toolUseId)
        s.lastToolStart = { tool: obs.tool, toolUseId: obs.toolUseId };
      // Another tool of the same batch says nothing about the dialog waiting for this one.
      if (s.pending && s.pendingToolUseId && obs.toolUseId && obs.toolUseId !== s.pendingToolUseId) return;
      closePending(s, at);
      s.booting = false;
      enter(step, "working", at);
      return;
    case "permission":
      hookPermission(step, obs.request, at);
      return;
    case "dialog-waiting":
      // The agent says a dialog waits: if ag does not know it, the screen shows which.
      if (!s.pending) step.rereadAt = at;
      return;
    case "waiting-for-input":
      if (s.status === "working" || s.status === "stalled") endTurn(step, "completed", at);
      return;
    case "turn-ended":
      closePending(s, at);
      endTurn(step, "completed", at);
      return;
    case "turn-failed":
      closePending(s, at);
      announceFailure(step, obs.error, obs.rateLimited);
      endTurn(step, "failed", at);
      return;
    case "keys":
      pressed(step, obs.keys, at);
      return;
    case "session-ended":
      // Not an end by itself: `claude --resume` was seen sending SessionEnd while it kept
      // running. The process exiting (pane death, exit screen) ends the session.
      step.detail = obs.reason;
      return;
    case "exited":
      terminate(
        step,
        obs.status === 0 ? "completed" : "crashed",
        obs.status === 0 ? "agent exited" : `agent exited with status ${obs.status ?? "unknown"}`,
      );
      return;
    case "gone":
      terminate(step, "crashed", "the agent's window disappeared");
      return;
    case "launch-failed":
      terminate(step, "crashed", `launch failed: ${obs.error}`);
      return;
    case "closed":
      terminate(step, obs.reason === "killed" ? "killed" : "completed", obs.reason, obs.detail);
      return;
    case "launched":
      step.events.push("session.created");
      step.meta["session.created"] = obs.origin;
      step.detail = obs.detail;
      return;
    case "input-recorded": // proof of typing taken, and a sign of life: nothing more
    case "screen-working":
    case "screen-idle":
    case "starting":
    case "activity":
    case "tick":
      return;
  }
}

/**
 * ag pressed keys. Approving or answering a dialog lets the agent go on; refusing or cancelling
 * one ends the turn (Claude Code then waits for the user, and sends no hook to say so). An
 * interrupt of a working turn leaves the outcome to the screen: it stops, or it had just ended.
 */
function pressed(step: Step, keys: string, at: number): void {
  const s = step.state;
  const hadDialog = s.pending !== null;
  const startUp = s.pending?.kind === "trust";
  closePending(s, at);
  if (startUp) {
    // A start-up dialog answered: the agent's UI comes up next (or it exits, if refused).
    enter(step, "working", at);
    s.booting = true;
    return;
  }
  if (hadDialog) {
    if (keys === "approve" || keys === "answer") enter(step, "working", at);
    else endTurn(step, "interrupted", at);
    return;
  }
  if (s.status === "working" || s.status === "stalled") {
    s.since = at;
    s.screenJudges = true;
    s.screenCaughtUp = false;
  }
}

function hookPermission(step: Step, request: PermissionRequest, at: number): void {
  const s = step.state;
  // The screen raised this dialog first: the hook names it better, under the same id.
  if (s.pending && !s.pendingFromHook && s.pending.kind === request.kind && sameDialog(s.pending, request)) {
    s.pending = { ...s.pending, ...request, id: s.pending.id };
    s.pendingFromHook = true;
    s.since = at;
    return;
  }
  raise(step, request, at, "hook");
  const tool = s.lastToolStart;
  s.pendingToolUseId = tool && tool.tool === request.tool ? tool.toolUseId : null;
}

// ── The screen ───────────────────────────────────────────────────────────────────────────────────

function readScreen(step: Step, obs: Observation, at: number): void {
  const s = step.state;
  // The exit screen is final: the process is gone, no later frame can take it back.
  if (obs.kind === "exited") {
    apply(step, obs, "screen", at);
    return;
  }
  const view = viewOf(obs);
  if (view === null) return;
  if (s.booting) {
    if (view === "working") return; // noise while the UI loads
    s.booting = false;
    // The first idle screen: the UI is up, ready for a prompt (no confirmation needed).
    if (view === "idle" && !isDialog(s.status)) {
      endTurn(step, "completed", at, true);
      return;
    }
  }
  if (view === "dialog") {
    if (obs.kind === "permission") screenDialog(step, obs.request, at);
    return;
  }
  // A frame captured before the evidence that set the status shows an older moment.
  if (at < s.since) return;
  if (s.answered) s.answered.goneSeen = true;
  if (view === expectedView(s)) {
    s.screenCaughtUp = true;
    s.disagreement = null;
    return;
  }
  if (isDialog(s.status)) {
    // Only a screen that has shown this dialog can tell that it is gone.
    if (s.dialogSeen || s.screenJudges) disagree(step, view, obs, at);
    return;
  }
  if (!(s.screenCaughtUp || s.screenJudges || at - s.since >= CATCH_UP_MS)) return;
  if (obs.kind === "screen-idle" && obs.interrupted && s.status !== "idle") {
    endTurn(step, "interrupted", at, true);
    return;
  }
  disagree(step, view, obs, at);
}

function screenDialog(step: Step, request: PermissionRequest, at: number): void {
  const s = step.state;
  if (s.pending && s.pending.kind === request.kind && (!s.dialogSeen || sameDialog(s.pending, request))) {
    // The pending dialog, on screen (the first dialog shown after its hook is that hook's).
    s.dialogSeen = true;
    s.screenCaughtUp = true;
    s.disagreement = null;
    s.pending = { ...request, ...s.pending };
    return;
  }
  if (at < s.since) return;
  const answered = s.answered;
  if (!s.pending && answered && !answered.goneSeen && sameDialog(answered.request, request)) {
    // Answered, and the agent has not redrawn yet; past the grace the answer did not take.
    if (at - answered.at < ANSWER_GRACE_MS) {
      step.rereadAt = answered.at + ANSWER_GRACE_MS;
      return;
    }
    const { id: _, ...again } = answered.request;
    raise(step, again, at, "screen");
    return;
  }
  if (s.pending) closePending(s, at); // another dialog took its place
  raise(step, request, at, "screen");
}

/** The screen contradicts the status: it decides on a frame CONFIRM_MS after the first. */
function disagree(step: Step, view: "working" | "idle", obs: Observation, at: number): void {
  const s = step.state;
  if (!s.disagreement || s.disagreement.view !== view) s.disagreement = { view, since: at };
  if (at - s.disagreement.since < CONFIRM_MS) {
    step.rereadAt = s.disagreement.since + CONFIRM_MS;
    return;
  }
  const closedDialog = isDialog(s.status);
  closePending(s, at);
  if (view === "working") {
    enter(step, "working", at);
    s.screenCaughtUp = true;
    // Work begun without a prompt hook (a shell command, a prompt typed by hand): a turn.
    s.turnOpen = true;
    return;
  }
  if (obs.kind === "turn-failed") announceFailure(step, obs.error, obs.rateLimited);
  const how: TurnEnd =
    obs.kind === "turn-failed" ? "failed" : closedDialog || s.screenJudges ? "interrupted" : "completed";
  endTurn(step, how, at, true);
}

// ── Shared steps ─────────────────────────────────────────────────────────────────────────────────

function raise(step: Step, request: PermissionRequest, at: number, source: "hook" | "screen"): void {
  const s = step.state;
  const count = s.permissionCount + 1;
  s.permissionCount = count;
  s.booting = false;
  enter(step, request.kind === "question" ? "asking" : "permission_prompt", at);
  s.pending = { id: `perm-${count}`, ...request };
  step.detail = describeDialog(request);
  s.pendingFromHook = source === "hook";
  s.pendingToolUseId = null;
  s.dialogSeen = source === "screen";
  s.screenCaughtUp = source === "screen";
  s.answered = null;
}

/** The pending dialog is over: remembered as answered, so frames still showing it are stale. */
function closePending(s: StatusState, at: number): void {
  if (!s.pending) return;
  s.answered = { request: s.pending, at, goneSeen: false };
  s.pending = null;
  s.pendingToolUseId = null;
  s.dialogSeen = false;
}

function endTurn(step: Step, how: TurnEnd, at: number, byScreen = false): void {
  const s = step.state;
  const wasOpen = s.turnOpen;
  enter(step, "idle", at);
  if (byScreen) s.screenCaughtUp = true;
  s.booting = false;
  if (wasOpen) {
    s.turnOpen = false;
    step.turnEnd = how;
  }
}

function announceFailure(step: Step, error: string, rateLimited: boolean): void {
  if (step.state.failureAnnounced) return;
  step.state.failureAnnounced = true;
  step.events.push(rateLimited ? "status.rate_limited" : "status.error");
  step.detail = error;
}

function terminate(step: Step, status: SessionStatus, endReason: string, detail = endReason): void {
  const s = step.state;
  closePending(s, s.since);
  s.status = status;
  s.stalledFrom = null;
  s.disagreement = null;
  s.turnOpen = false;
  step.endReason = endReason;
  step.detail = detail;
  const reason = status === "killed" ? "killed" : endReason === "idle_timeout" ? "idle_timeout" : undefined;
  step.meta["session.ended"] = { reason: reason ?? (status === "crashed" ? "failed" : "normal") };
  // ag's own end says its reason; the agent's own end says what happened to it.
  if (reason) step.details = { "session.ended": reason };
  if (endReason === "idle_timeout") {
    step.lead.push("status.stopped");
    step.meta["status.stopped"] = { reason: "idle_timeout" };
  }
}

/** A new status, with what belongs to the old one forgotten. Staying put keeps everything. */
function enter(step: Step, status: SessionStatus, at: number): void {
  const s = step.state;
  s.since = Math.max(s.since, at);
  if (status === s.status) {
    s.screenCaughtUp = false;
    return;
  }
  s.status = status;
  if (!isDialog(status)) {
    s.pending = null;
    s.dialogSeen = false;
  }
  s.disagreement = null;
  s.stalledFrom = null;
  s.screenCaughtUp = false;
  s.screenJudges = false;
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

function nextReread(s: StatusState, asked: number | null): number | null {
  const due = s.disagreement ? s.disagreement.since + CONFIRM_MS : null;
  if (asked === null) return due;
  return due === null ? asked : Math.min(asked, due);
}

// ── Views and dialogs ────────────────────────────────────────────────────────────────────────────

function isDialog(status: SessionStatus): boolean {
  return status === "permission_prompt" || status === "asking";
}

/** What a frame shows, coarsely; null for a frame with no opinion (the UI still loading). */
function viewOf(obs: Observation): View | null {
  switch (obs.kind) {
    case "screen-working":
      return "working";
    case "screen-idle":
    case "turn-failed":
      return "idle";
    case "permission":
      return "dialog";
    default:
      return null;
  }
}

function expectedView(s: StatusState): View {
  if (isDialog(s.status)) return "dialog";
  if (s.status === "idle") return "idle";
  return "working"; // working, and stalled (a stall is a working agent gone quiet)
}

/**
 * Two readings of one dialog: the same kind and, for tools, details that can be the same thing
 * seen two ways (a hook's absolute path and the screen's file name; a command and its first line).
 */
export function sameDialog(a: PermissionRequest, b: PermissionRequest): boolean {
  if (a.kind !== b.kind) return false;
  if (a.kind === "trust") return a.dialog === b.dialog;
  if (a.kind === "plan") return true;
  // A dialog of several questions shows them one after another: each is asked anew.
  if (a.kind === "question") return compatible(a.question ?? a.detail, b.question ?? b.detail);
  return compatible(a.detail, b.detail);
}

/** The same text seen two ways: whole, cut short (a first line), or without its path. */
function compatible(a: string, b: string): boolean {
  const x = a.replace(/\s+/g, " ").trim();
  const y = b.replace(/\s+/g, " ").trim();
  if (!x || !y) return true;
  return x.startsWith(y) || y.startsWith(x) || x.endsWith(y) || y.endsWith(x);
}

/** A dialog in one line, for events and channels: the tool and its input, or the question and its options. */
export function describeDialog(request: PermissionRequest): string {
  if (request.kind === "question") {
    const options = request.options?.map((o) => `${o.index}. ${o.label}`).join(" · ");
    return options
      ? `${request.question ?? request.detail} — ${options}`
      : (request.question ?? request.detail);
  }
  if (request.kind === "tool") return request.tool ? `${request.tool}: ${request.detail}` : request.detail;
  return request.detail;
}

// ── Events ───────────────────────────────────────────────────────────────────────────────────────

const ENTER_EVENTS: Partial<Record<SessionStatus, EventName[]>> = {
  working: ["session.working", "status.working"],
  idle: ["session.idle", "status.idle"],
  asking: ["status.question"],
  stalled: ["session.stalled", "status.stall"],
  completed: ["session.ended"],
  crashed: ["status.dead", "session.ended"],
  killed: ["session.killed", "session.ended"],
};

function transitionEvents(prev: StatusState, next: StatusState, turnEnd: TurnEnd | undefined): EventName[] {
  const events: EventName[] = [];
  const newPermission = next.pending !== null && next.pending.id !== prev.pending?.id;
  if (prev.status !== next.status || newPermission) {
    if (prev.status === "stalled" && next.status !== "stalled") events.push("status.recovered");
    if (next.status === "permission_prompt") {
      events.push(
        "permission.requested",
        next.pending?.kind === "plan" ? "status.plan" : "status.permission",
      );
    } else {
      if (next.status === "asking") events.push("permission.requested");
      events.push(...(ENTER_EVENTS[next.status] ?? []));
    }
  }
  if (turnEnd) events.push("session.turn_ended");
  return events;
}
