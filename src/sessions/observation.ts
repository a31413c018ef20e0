import type { PendingPermission } from "./session.ts";

/**
 * What the agent adapter tells the state fusion, in agent-neutral words. Each observation names
 * its source, because the sources differ in strength: a hook is the agent saying what it does;
 * a transcript line is what it wrote down; the screen is what a person would see.
 */
export type ObservationSource = "hook" | "transcript" | "screen" | "tmux" | "timer" | "ag";

export type PermissionRequest = Omit<PendingPermission, "id">;

export type Observation =
  /** A prompt was accepted (UserPromptSubmit, or a new human line in the transcript). */
  | { kind: "prompt-submitted"; text: string; promptId?: string }
  /** Something happened that only proves the agent is alive (tool start/end, streamed text). */
  | { kind: "activity"; working: boolean }
  /** The agent waits for an answer: a tool permission, a plan approval, folder trust, a question. */
  | { kind: "permission"; request: PermissionRequest }
  /** The turn finished (Stop). */
  | { kind: "turn-ended" }
  /** The turn ended on an API error (StopFailure, or the error line on screen). */
  | { kind: "turn-failed"; error: string; rateLimited: boolean }
  /** The screen shows the spinner: the agent is working. */
  | { kind: "screen-working" }
  /** The screen shows the input box and no spinner or dialog. */
  | { kind: "screen-idle"; interrupted: boolean }
  /** The agent UI is still starting (no input box yet, no dialog). */
  | { kind: "starting" }
  /** The agent process ended: cleanly (status 0) or not. */
  | { kind: "exited"; status: number | null }
  /** Its window is gone without ag killing it. */
  | { kind: "gone" }
  /** The agent ended its session (SessionEnd). */
  | { kind: "session-ended"; reason: string }
  /** Time passed (stall and confirmation checks). */
  | { kind: "tick" };
