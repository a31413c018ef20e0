import type { PermissionRequest } from "../../../agents/agent.ts";
import type { StatusEventName, StatusExtra, TurnEnd } from "../../../events/names.ts";
import type { PendingPermission, SessionStatus } from "../../session.ts";
import { describeDialog } from "./dialogs.ts";

/** What the fusion knows of one session, and the steps every part of it takes. */

export type { TurnEnd };

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
  /** ag interrupted (or refused) what the agent was doing: a turn the screen then ends was cut short. */
  interruptedByAg: boolean;
  /** This run's suffix of permission ids (empty in tests). */
  idTag: string;
  /** What the screen says against the status, since which capture. */
  disagreement: { view: "working" | "idle"; since: number } | null;
  /** The pending dialog has been on screen. */
  dialogSeen: boolean;
  /** When the screen first showed it (the capture's time), null while unseen. */
  dialogSeenAt: number | null;
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
  events: StatusEventName[];
  /** Extra meta per event (session.ended's reason, session.turn_ended's reason, session.created's origin). */
  meta: { [N in StatusEventName]?: StatusExtra<N> };
  detail?: string;
  /** A detail of its own for an event, where the transition's does not fit (session.ended: its reason). */
  details?: Partial<Record<StatusEventName, string>>;
  /** Why a terminal state was entered. */
  endReason?: string;
  /** When to look again even if nothing is observed (the stall check). */
  recheckAt: number | null;
  /** When to capture the screen again: a confirmation is due, an answer's grace is over. */
  rereadAt: number | null;
  /**
   * When the screen may judge a state it has not shown (a lost hook leaves a still screen that
   * sends no pane output); null once it has shown it. Recomputed by every transition.
   */
  catchUpAt: number | null;
}

/** Accumulates what one reduction says besides the state. */
/** Accumulates what one reduction says besides the state. */
export interface Step {
  state: StatusState;
  /** Events before the transition's own (an idle timeout is told before the end). */
  lead: StatusEventName[];
  events: StatusEventName[];
  meta: Transition["meta"];
  detail?: string;
  details?: Transition["details"];
  endReason?: string;
  rereadAt: number | null;
  turnEnd?: TurnEnd;
}

export function isDialog(status: SessionStatus): boolean {
  return status === "permission_prompt" || status === "asking";
}

export function raise(step: Step, request: PermissionRequest, at: number, source: "hook" | "screen"): void {
  const s = step.state;
  const count = s.permissionCount + 1;
  s.permissionCount = count;
  s.booting = false;
  enter(step, request.kind === "question" ? "asking" : "permission_prompt", at);
  s.pending = { id: `perm-${count}${s.idTag ? `-${s.idTag}` : ""}`, ...request };
  step.detail = describeDialog(request);
  s.pendingFromHook = source === "hook";
  s.pendingToolUseId = null;
  s.dialogSeen = source === "screen";
  s.dialogSeenAt = source === "screen" ? at : null;
  s.screenCaughtUp = source === "screen";
  // `answered` stays: frames captured before that answer still show the dialog answered.
}

/** The pending dialog is over: remembered as answered, so frames still showing it are stale. */
export function closePending(s: StatusState, at: number, goneSeen = false): void {
  if (!s.pending) return;
  s.answered = { request: s.pending, at, goneSeen };
  s.pending = null;
  s.pendingToolUseId = null;
  s.dialogSeen = false;
  s.dialogSeenAt = null;
}

export function endTurn(step: Step, how: TurnEnd, at: number, byScreen = false): void {
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

export function announceFailure(step: Step, error: string, rateLimited: boolean): void {
  if (step.state.failureAnnounced) return;
  step.state.failureAnnounced = true;
  step.events.push(rateLimited ? "status.rate_limited" : "status.error");
  step.detail = error;
}

export function terminate(step: Step, status: SessionStatus, endReason: string, detail = endReason): void {
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

/**
 * A new status, with what belongs to the old one forgotten. Staying put keeps everything but the
 * time: frames captured before this evidence can no longer contradict it.
 */
export function enter(step: Step, status: SessionStatus, at: number): void {
  const s = step.state;
  s.since = Math.max(s.since, at);
  if (status === s.status) return;
  s.status = status;
  if (!isDialog(status)) {
    s.pending = null;
    s.dialogSeen = false;
    s.dialogSeenAt = null;
  }
  s.disagreement = null;
  s.stalledFrom = null;
  handBackToHooks(s);
}

/**
 * The screen must show the change before it may judge it again (a frame of what came before can
 * still be drawn), and what an interrupt or a re-adoption left to the screen is the hooks' again.
 */
export function handBackToHooks(s: StatusState): void {
  s.screenCaughtUp = false;
  s.screenJudges = false;
  s.interruptedByAg = false;
}
