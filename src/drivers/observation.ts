import type { AgentObservation } from "../agents/agent.ts";
import type { SessionLaunch, StatusSource } from "../events/names.ts";

/**
 * Everything the state fusion hears, and from whom. The agent adapter speaks for the agent's
 * hooks, transcript and screen (AgentObservation); tmux says when a pane dies or a window goes;
 * ag itself says what it did (its own keys, a kill, a launch); the timer says time passed.
 */
export type ObservationSource = StatusSource;

/** How ag answered or cut short what the agent was doing, with its own keys. */
export type AgKeys = "approve" | "reject" | "answer" | "interrupt" | "escape";

export type Observation =
  | AgentObservation
  /** The window is gone without ag closing it. */
  | { kind: "gone" }
  /**
   * ag pressed keys that answer a dialog or interrupt the turn. `dialog`: the id of the dialog
   * the keys answered (approve, reject, answer), as it was pending when they were pressed.
   */
  | { kind: "keys"; keys: AgKeys; dialog?: string }
  /** ag launched the agent (a new session, or an ended one resumed); `origin` goes on session.created. */
  | { kind: "launched"; detail: string; origin: SessionLaunch }
  /** ag could not open the agent's window. */
  | { kind: "launch-failed"; error: string }
  /** ag ended the session: a kill, or the idle timeout. */
  | { kind: "closed"; reason: "killed" | "idle_timeout"; detail: string }
  /**
   * ag restarted and could not reopen the session's headless agent (ACP children die with ag);
   * `cause`: why, whole (the failure and the agent's stderr tail).
   */
  | { kind: "driver-lost"; cause?: string }
  /** Time passed (stall checks). */
  | { kind: "tick" };

export type { AgentObservation };
