import type { PermissionRequest } from "../../../agents/agent.ts";
import type { Observation } from "../../../drivers/observation.ts";
import { sameDialog } from "./dialogs.ts";
import {
  announceFailure,
  closePending,
  endTurn,
  enter,
  isDialog,
  raise,
  type StatusState,
  type Step,
  type TurnEnd,
} from "./state.ts";
import { apply } from "./strong.ts";

/** The screen's evidence: weak, late, and only ever judged against what stronger evidence said. */

export const CONFIRM_MS = 1500;
/** A status the screen never showed for this long may be judged by the screen (its hook was lost). */
export const CATCH_UP_MS = 10_000;
/**
 * A dialog answered but still on screen this long after is waiting again (the keys did not take).
 * The agent redraws within 30–250 ms of a key even with every core busy (measured).
 */
export const ANSWER_GRACE_MS = 5_000;

type View = "working" | "idle" | "dialog";

export function readScreen(step: Step, obs: Observation, at: number): void {
  const s = step.state;
  // The exit screen is final: the process is gone, no later frame can take it back.
  if (obs.kind === "exited") {
    apply(step, obs, "screen", at);
    return;
  }
  const view = viewOf(obs);
  if (view === null) return;
  if (s.booting && view !== "dialog") {
    if (view === "working") return; // noise while the UI loads
    s.booting = false;
    // The first idle screen: the UI is up, ready for a prompt (no confirmation needed).
    if (!isDialog(s.status)) {
      endTurn(step, "completed", at, true);
      return;
    }
  }
  // (A dialog while booting: the start-up dialog just answered, still drawn, leaves the UI
  // booting; a new one is raised, which ends the booting.)
  // The start screen shows no conversation, so no turn's end: an open turn's prompt was taken
  // from it (OpenCode, loaded: its box emptied, the start screen kept up for seconds after its
  // prompt hook, before the turn was drawn or begun).
  if (obs.kind === "screen-idle" && obs.home && s.turnOpen) return;
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
  // A frame captured before ag's last answer shows the dialog answered, not the one that followed.
  const beforeAnswer = s.answered !== null && at < s.answered.at;
  const firstShown = !s.dialogSeen && !beforeAnswer;
  if (s.pending && s.pending.kind === request.kind && (firstShown || sameDialog(s.pending, request))) {
    // The pending dialog, on screen (the first dialog shown after its hook is that hook's).
    if (!s.dialogSeen) s.dialogSeenAt = at;
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
  closePending(s, at, true); // this frame showed it gone
  if (view === "working") {
    enter(step, "working", at);
    s.screenCaughtUp = true;
    // Work begun without a prompt hook (a shell command, a prompt typed by hand): a turn.
    s.turnOpen = true;
    return;
  }
  if (obs.kind === "turn-failed") announceFailure(step, obs.error, obs.rateLimited);
  const how: TurnEnd =
    obs.kind === "turn-failed" ? "failed" : closedDialog || s.interruptedByAg ? "interrupted" : "completed";
  endTurn(step, how, at, true);
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
