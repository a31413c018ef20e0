import type { PermissionRequest } from "../../../agents/agent.ts";
import type { Observation, ObservationSource } from "../../../drivers/observation.ts";
import { sameDialog } from "./dialogs.ts";
import {
  announceFailure,
  closePending,
  endTurn,
  enter,
  handBackToHooks,
  isDialog,
  raise,
  type Step,
  terminate,
} from "./state.ts";

/** Strong evidence: the agent's hooks, its transcript, ag's own doings, tmux. They set the state as they arrive. */

export function apply(step: Step, obs: Observation, source: ObservationSource, at: number): void {
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
      // A new turn (even when the state stays working).
      handBackToHooks(s);
      return;
    case "tool":
      if (obs.phase === "started" && obs.toolUseId)
        s.lastToolStart = { tool: obs.tool, toolUseId: obs.toolUseId };
      // The screen showed a dialog before its tool's start arrived: that start comes before the
      // dialog (its PermissionRequest follows), it answers nothing.
      if (obs.phase === "started" && s.pending && !s.pendingFromHook && s.pending.tool === obs.tool) return;
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
      // "Claude is waiting for your input" (60 s idle): no turn runs and no dialog waits.
      closePending(s, at, true);
      endTurn(step, "completed", at);
      return;
    case "turn-ended":
      closePending(s, at);
      endTurn(step, obs.interrupted ? "interrupted" : "completed", at);
      return;
    case "turn-failed":
      closePending(s, at);
      announceFailure(step, obs.error, obs.rateLimited);
      endTurn(step, "failed", at);
      return;
    case "keys":
      pressed(step, obs.keys, obs.dialog, at);
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
    case "driver-lost":
      terminate(
        step,
        "crashed",
        "driver_restart",
        `ag restarted; the agent could not reopen its ACP session${obs.cause ? `: ${obs.cause}` : ""}`,
      );
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
 *
 * Keys meant for a dialog that is no longer the pending one (the tool's hook, or the next
 * dialog, arrived while they were pressed) say nothing about the state now: what the agent did
 * with them was already told. A refusal whose dialog is gone from a working turn is an Escape
 * into that turn, judged as an interrupt is.
 */
function pressed(step: Step, keys: string, dialog: string | undefined, at: number): void {
  const s = step.state;
  if (dialog !== undefined && s.pending?.id !== dialog) {
    if (keys === "approve" || keys === "answer" || s.pending !== null) return;
  }
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
    s.interruptedByAg = true;
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
