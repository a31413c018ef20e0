import type { EventName } from "../events/names.ts";
import type { Observation } from "../sessions/observation.ts";
import type { PendingPermission } from "../sessions/session.ts";
import type { TranscriptFormat } from "../transcript/cursor.ts";

/**
 * Everything ag needs from one agent CLI. Sessions know agents only through this interface;
 * all knowledge of a particular CLI (launch line, hooks, screens, transcript) lives in
 * agents/<name>/.
 */

export type ToolCategory = "read" | "write" | "bash" | "other";

/** What the answer keys depend on: the pending permission's kind and, for `trust`, its dialog. */
export type PendingDialog = Pick<PendingPermission, "kind" | "dialog">;

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

export interface ScreenReading {
  /** The agent-neutral reading of the screen, fed to the state fusion. */
  observation: Observation;
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
  observation?: Observation;
  messages: Array<{ event: EventName; detail: string; meta: Record<string, unknown> }>;
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
  readScreen(text: string, options?: { paneDead?: boolean }): ScreenReading;
  /** Maps one hook callback to an observation (null when it carries nothing for the state). */
  readHook(event: string, payload: Record<string, unknown>): Observation | null;
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
    interrupt: string[];
    escape: string[];
    submit: string[];
  };
}
