import type { EventInput } from "../events/bus.ts";
import type { MessageEventName } from "../events/names.ts";
import type { PendingPermission } from "../sessions/index.ts";
import type { TranscriptFormat } from "../transcript/cursor.ts";

/**
 * Everything ag needs from one agent CLI. Sessions know agents only through this interface;
 * all knowledge of a particular CLI (launch line, hooks, screens, transcript) lives in
 * agents/<name>/.
 */

export type ToolCategory = "read" | "write" | "bash" | "other";

/** What the answer keys depend on: the pending permission's kind and, for `trust`, its dialog. */
export type PendingDialog = Pick<PendingPermission, "kind" | "dialog">;

/** One step of typing into the agent: named keys (one press each), or literal text. */
export type KeyStep = { keys: string[] } | { text: string };

export interface LaunchRequest {
  sessionId: string;
  workDir: string;
  permissionMode: string;
  /** Overrides the agent's plain command (e.g. "claude --model opus"); null for the default. */
  agentCommand: string | null;
  /** Where this session's private files go (settings, hook secret). Created 0700. */
  sessionDir: string;
  /** Hooks call back here: `${hookBaseUrl}/v1/hooks/<Event>`. */
  hookBaseUrl: string;
  hookSecret: string;
  /** Extra environment for the agent process (never typed into the pane). */
  env: Record<string, string>;
  /** Resume an earlier conversation instead of starting one (fork = as a new branch). */
  resume?: { conversationId: string; fork: boolean };
}

export interface LaunchPlan {
  command: string[];
  env: Record<string, string>;
  /** Notes for the session's `warnings` (something skipped or assumed). */
  warnings: string[];
}

/** A dialog of the agent waiting for a person: a tool permission, a plan, folder trust, a question. */
export type PermissionRequest = Omit<PendingPermission, "id">;

/**
 * What the agent adapter tells the state fusion, in agent-neutral words, from the agent's hooks,
 * its transcript lines and its screen. The fusion weighs them by source (sessions/live/status.ts).
 */
export type AgentObservation =
  /** A prompt was accepted (its submit hook, or a new prompt line in the transcript). */
  | { kind: "prompt-submitted"; text: string; promptId?: string }
  /**
   * Input the agent wrote down once it had run it (a shell or built-in command): proof that it
   * was taken, no evidence of the state now (the line may come after the turn it started ended).
   */
  | { kind: "input-recorded"; text: string; promptId?: string }
  /** A tool started (PreToolUse) or finished (PostToolUse): the agent works. */
  | { kind: "tool"; phase: "started" | "finished"; tool: string; toolUseId?: string }
  /** A sign of life that says nothing about the state (a transcript line, a sub-agent's end). */
  | { kind: "activity" }
  /** A dialog waits for an answer. */
  | { kind: "permission"; request: PermissionRequest }
  /** The agent says a dialog waits, without saying which (its reminder notification). */
  | { kind: "dialog-waiting" }
  /** The agent says it has been waiting for input a while (its idle notification). */
  | { kind: "waiting-for-input" }
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
  /** The agent ended its session (SessionEnd). */
  | { kind: "session-ended"; reason: string };

export interface ScreenReading {
  /** The agent-neutral reading of the screen, fed to the state fusion. */
  observation: AgentObservation;
  /** The live input box's text, or null when no input box is shown (a dialog, start-up, exit). */
  input: string | null;
  /** The screen with volatile parts (spinner, timers) removed: changes here are agent activity. */
  activityKey: string;
  /**
   * A dialog ag's configuration already answered (the folder-trust dialog with trustWorkdir on):
   * the keys that answer it and what it is, for the log. The session presses them once instead
   * of asking the user. Absent for every other screen.
   */
  autoAnswer?: { dialog: string; keys: string[] };
}

/** What one transcript line means: for the state, and as an event. */
export interface TranscriptLineMeaning {
  /** When the agent wrote the line (epoch ms), when it says. */
  at?: number;
  observation?: AgentObservation;
  /** The line as `message.*` events (the session adds itself). */
  messages: Array<EventInput<MessageEventName>>;
  /**
   * The tokens one of the agent's messages used, as this line reports them. A message's lines
   * repeat its usage (streaming may write a smaller count first), and a fork's transcript copies
   * its parent's messages: totals count each message id once, with its largest figures.
   */
  usage?: {
    messageId: string;
    model: string | null;
    tokens: { input: number; output: number; cacheRead: number; cacheCreation: number };
  };
}

/** A condensed view of a whole conversation (GET /v1/sessions/:id/summary). */
export interface TranscriptSummary {
  messages: { user: number; assistant: number; system: number };
  /** Prompts a person (or ag) gave. */
  turns: number;
  toolCalls: number;
  toolCallsByName: Record<string, number>;
  toolErrors: number;
  /** Files the agent wrote or edited, in the order first touched. */
  filesTouched: string[];
  lastUserMessage: string | null;
  lastAssistantMessage: string | null;
  startedAt: string | null;
  lastEntryAt: string | null;
  durationMs: number | null;
}

/** Folds a session's transcript lines, in file order, into what ag reports. */
export interface TranscriptReader {
  add(line: string): TranscriptLineMeaning;
  /** `/read`'s output: the assistant text of the latest turn. */
  output(): string;
  /** Whether the latest turn's end is written down (the agent may flush lines after its Stop hook). */
  turnEnded(): boolean;
  tokens(): { input: number; output: number; cacheRead: number; cacheCreation: number };
  /** Tokens per model name (for cost estimates). */
  tokensByModel(): Record<
    string,
    { input: number; output: number; cacheRead: number; cacheCreation: number }
  >;
  summary(): TranscriptSummary;
}

export interface AgentAdapter {
  readonly name: string;
  /** Is this process (its argv) a run of this agent's CLI? For the swarm's scan of the system. */
  isAgentProcess(argv: readonly string[]): boolean;
  /** Writes whatever the launch needs (settings, trust) and returns the command to run. */
  prepareLaunch(request: LaunchRequest): Promise<LaunchPlan>;
  /**
   * `workDir`: the session's (normalised) folder. A folder-trust dialog is answered by ag only
   * when it names that folder, never another one the agent may have been started in.
   */
  readScreen(text: string, options?: { paneDead?: boolean; workDir?: string }): ScreenReading;
  /** Whether what the agent recorded as submitted (hook, transcript) is this text as ag typed it. */
  isSubmission(typed: string, recorded: string): boolean;
  /**
   * Input the agent records late or never (a shell command, a built-in slash command): for it,
   * the input box emptied by Enter is taken as delivery when no record comes in time.
   */
  recordsLate(text: string): boolean;
  /** Maps one hook callback to an observation (null when it carries nothing for the state). */
  readHook(event: string, payload: Record<string, unknown>): AgentObservation | null;
  readonly hookEvents: readonly string[];
  transcript: {
    format: TranscriptFormat;
    /** The session's transcript file, if it exists yet. */
    find(workDir: string, sessionId: string): Promise<string | null>;
    createReader(): TranscriptReader;
  };
  /** What ag needs to enforce a session's permission policy in the agent's pre-tool hook. */
  policy: {
    /** The tool a hook payload is about, and its kind; null when the hook is not about a tool. */
    tool(event: string, payload: Record<string, unknown>): { name: string; category: ToolCategory } | null;
    /** The agent's reply that refuses the tool, for the hook events that can refuse one. */
    deny(event: string, reason: string): Record<string, unknown> | null;
  };
  /**
   * Keys that answer the pending dialog. They depend on the dialog, not only its kind: each
   * preselects its own option (a `trust` prompt may be any of the agent's start-up dialogs).
   */
  keys: {
    approve(pending: PendingDialog): string[];
    reject(pending: PendingDialog): string[];
    /** Answers a question dialog: one of its options (1-based), or text of one's own. */
    answer(pending: PendingPermission, answer: { option: number } | { text: string }): KeyStep[];
    interrupt: string[];
    escape: string[];
    submit: string[];
  };
}
