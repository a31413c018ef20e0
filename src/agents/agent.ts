import type { EventInput } from "../events/bus.ts";
import type { MessageEventName } from "../events/names.ts";
import type { RunAs } from "../shared/run-as.ts";

import type { TranscriptFormat } from "../transcript/cursor.ts";
import type { HistoryConversation } from "./history.ts";
import type { DriverName, PendingPermission, PermissionMode, PriceTable, TokenCounts } from "./vocabulary.ts";

/**
 * Everything ag needs from one agent CLI. Sessions know agents only through this interface;
 * all knowledge of a particular CLI (launch line, hooks, screens, transcript) lives in
 * agents/<name>/.
 */

export type ToolCategory = "read" | "write" | "bash" | "other";

/** What ag can do with an agent, beyond typing prompts and reading its screen (GET /v1/agents). */
export const AGENT_CAPABILITIES = [
  /** It calls ag back on its events (prompt, tool, permission, turn end). */
  "hooks",
  /** It writes its conversation to a file ag reads (/transcript, /read, tokens). */
  "transcript",
  /** An ended session's conversation can be relaunched (POST /resume). */
  "resume",
  /** A conversation can be copied into a new session as a branch (POST /fork). */
  "fork",
  /** It asks the user questions with options (kind question, POST /answer). */
  "questions",
  /** ag's permission policy (profiles) is enforced in its pre-tool hook. */
  "policy",
] as const;
export type AgentCapability = (typeof AGENT_CAPABILITIES)[number];

export type { DriverName } from "./vocabulary.ts";

/** What the machine ag runs on gives every adapter. */
export interface AgentEnvironment {
  /** HOME of the agent processes (they inherit ag's environment through tmux). */
  home: string;
  /** AGENT_DATA_DIR (SPEC): the default agent's data directory; null = the CLI's own. */
  dataDir: string | null;
  /** Pre-accept the folder-trust question for the workDir in the agent's own config. */
  trustWorkdir: boolean;
  /** argv that runs this very program (for `ag hook`, the forwarder of command hooks). */
  selfCommand: string[];
  isRoot: boolean;
}

/** One hook callback, read: whose it is and what it means for the state. */
export interface HookReading {
  observation: AgentObservation | null;
  /** The agent's own conversation id, when the payload names it (a session id ag gave, or not). */
  conversationId?: string;
  /** The conversation file, when the payload names it: the surest way to find it. */
  transcriptPath?: string;
}

/** What the answer keys depend on: the pending permission's kind and, for `trust`, its dialog. */
export type PendingDialog = Pick<PendingPermission, "kind" | "dialog">;

/** One step of typing into the agent: named keys (one press each), or literal text. */
export type KeyStep = { keys: string[] } | { text: string };

export interface LaunchRequest {
  sessionId: string;
  workDir: string;
  permissionMode: string;
  /** The model the agent runs, in its own words (Session.model); null or absent: its own default. */
  model?: string | null;
  /** Overrides the agent's plain command (e.g. "claude --model opus"); null for the default. */
  agentCommand: string | null;
  /** Where this session's private files go (settings, hook secret). Created 0700. */
  sessionDir: string;
  /** This agent's hooks call back here: `${hookUrl}/<event>` (with the secret header). */
  hookUrl: string;
  hookSecret: string;
  /** Extra environment for the agent process (never typed into the pane). */
  env: Record<string, string>;
  /**
   * Resume an earlier conversation instead of starting one (fork = as a new branch):
   * `conversationId` is the ag session that had it, `transcriptPath` its conversation file as ag
   * recorded it (for an agent that names conversations its own way, the file says which).
   */
  resume?: { conversationId: string; fork: boolean; transcriptPath?: string };
  /**
   * The OS user the agent will run as (its tenant's runAs); null or absent: as ag. A helper the
   * launch itself runs (OpenCode's fork server) runs as it too.
   */
  runAs?: RunAs | null;
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
  /** The turn finished (Stop); `interrupted`: it was cut short at ag's request (ACP's cancelled). */
  | { kind: "turn-ended"; interrupted?: boolean }
  /** The turn ended on an API error (StopFailure, or the error line on screen). */
  | { kind: "turn-failed"; error: string; rateLimited: boolean }
  /** The screen shows the spinner: the agent is working. */
  | { kind: "screen-working" }
  /**
   * The screen shows the input box and no spinner or dialog. `home`: the agent's start screen, no
   * conversation drawn yet (it cannot show a turn's end).
   */
  | { kind: "screen-idle"; interrupted: boolean; home?: boolean }
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
   * The agent would take Enter now as a newline in its input, not as a submit: its guard after a
   * paste is still on, as its screen shows it (Gemini CLI's "expand pasted text" hint). Absent: no.
   */
  enterGuarded?: boolean;
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
    tokens: TokenCounts;
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

/** A summary of no transcript yet (a fresh object: readers fill theirs in). */
export function emptySummary(): TranscriptSummary {
  return {
    messages: { user: 0, assistant: 0, system: 0 },
    turns: 0,
    toolCalls: 0,
    toolCallsByName: {},
    toolErrors: 0,
    filesTouched: [],
    lastUserMessage: null,
    lastAssistantMessage: null,
    startedAt: null,
    lastEntryAt: null,
    durationMs: null,
  };
}

/**
 * What a reader's `summary()` answers: a copy of the summary it keeps as it reads (from
 * emptySummary()), with the files it saw touched, in order, and the time from its first entry to
 * its last.
 */
export function summaryOf(facts: TranscriptSummary, files: Iterable<string>): TranscriptSummary {
  const { startedAt, lastEntryAt } = facts;
  const span = startedAt && lastEntryAt ? Date.parse(lastEntryAt) - Date.parse(startedAt) : Number.NaN;
  return {
    ...facts,
    messages: { ...facts.messages },
    toolCallsByName: { ...facts.toolCallsByName },
    filesTouched: [...files],
    durationMs: Number.isFinite(span) ? span : null,
  };
}

/** Folds a session's transcript lines, in file order, into what ag reports. */
export interface TranscriptReader {
  add(line: string): TranscriptLineMeaning;
  /** `/read`'s output: the assistant text of the latest turn. */
  output(): string;
  /** Whether the latest turn's end is written down (the agent may flush lines after its Stop hook). */
  turnEnded(): boolean;
  tokens(): TokenCounts;
  /** Tokens per model name (for cost estimates). */
  tokensByModel(): Record<string, TokenCounts>;
  summary(): TranscriptSummary;
}

export interface AcpLaunchPlan extends LaunchPlan {
  /**
   * ag answers every permission request with the agent's `allow_once` option: the permission
   * mode is one the agent leaves to its client (OpenCode's `--auto` is its TUI's answer).
   */
  approveAll?: boolean;
}

/**
 * How the agent runs headless over the Agent Client Protocol (driver `acp`): the child process
 * ag spawns (its stdin/stdout carry the protocol) and what it reports beyond the protocol.
 */
export interface AcpEntry {
  /** The command and environment of the agent's ACP entry point (files it needs written). */
  prepare(request: LaunchRequest): Promise<AcpLaunchPlan>;
  /**
   * The agent's ACP session mode for each permission mode it has one for, for an agent that takes
   * its mode over the protocol (`session/set_mode` after `session/new` and `session/load`) rather
   * than on its command line.
   */
  modes?: Partial<Record<PermissionMode, string>>;
  /**
   * The agent takes the session's model over the protocol (`session/set_model` after
   * `session/new` and `session/load`) rather than from what `prepare` put on its command line.
   */
  protocolModel?: boolean;
  /**
   * The tokens a turn used, where the agent reports them its own way: in the `session/prompt`
   * response, or (for an agent whose adapter drops them) in the agent's own files about the turn.
   * Without it (or when it finds none) ag reads ACP's own `usage` of the response.
   */
  usage?(response: { _meta?: Record<string, unknown> | null }, turn: AcpTurn): AcpUsage | Promise<AcpUsage>;
  /**
   * A `session/prompt` error that is this agent's way of ending a turn, not a failure: the stop
   * reason it stands for (null: a failure).
   */
  promptError?(message: string): "cancelled" | "end_turn" | null;
  /**
   * For an agent that cannot load a conversation at any time: readies its files for
   * `session/load` of this ACP session id where it can, and answers when (epoch ms) the agent can
   * be sent it; ag waits until then (a minute at most). Without it, or 0: at once.
   */
  prepareLoad?(sessionId: string, now: number): Promise<number>;
}

/** The turn `AcpEntry.usage` is asked about. */
export interface AcpTurn {
  /** The agent's ACP session id. */
  sessionId: string;
  workDir: string;
  /** When ag sent its `session/prompt` (epoch ms). */
  startedAt: number;
}

export type AcpUsage = { model: string | null; tokens: TokenCounts } | null;

export interface AgentAdapter {
  /** The id sessions record (`agent`): claude, codex, gemini, opencode. */
  readonly name: string;
  /** For people: "Claude Code". */
  readonly displayName: string;
  /** Whose models it calls, as OpenTelemetry's gen_ai.provider.name says it: anthropic, openai… */
  readonly provider: string;
  /** Its CLI: the program ag runs, the npm package that installs it, its version flag. */
  readonly cli: { command: string; package: string; versionFlag: string };
  /**
   * The CLI versions this adapter is verified on: exact versions (oldest first) on which its e2e
   * contract passed. Any other version still runs, reported `verified: false`.
   */
  readonly verifiedVersions: readonly string[];
  /**
   * The adapter as it must drive and read one version of its CLI: the version a session's launch
   * read (`agentVersion`). What differs between versions (screens, paste frames, payloads) is
   * chosen here, never guessed from the screen. Null (unknown): the newest verified behaviour.
   * An adapter whose versions all behave alike returns itself.
   */
  forVersion(version: string | null): AgentAdapter;
  /**
   * The flags of its CLI its launch relies on (`--settings`, `--session-id`…): probed in its
   * `--help` at ag's start (GET /v1/agents `probe`), a missing one logged.
   */
  readonly probeFlags?: readonly string[];
  readonly drivers: readonly DriverName[];
  /** Its ACP entry point, when `drivers` has `acp`. */
  readonly acp?: AcpEntry;
  readonly capabilities: readonly AgentCapability[];
  /** The neutral permission modes it has an equivalent of; a create asking another is refused. */
  readonly permissionModes: readonly PermissionMode[];
  /** Built-in prices (USD per million tokens) by fragment of its models' names. */
  readonly prices: PriceTable;
  /** Is this process (its argv) a run of this agent's CLI? For the swarm's scan of the system. */
  isAgentProcess(argv: readonly string[]): boolean;
  /** Writes whatever the launch needs (settings, trust) and returns the command to run. */
  prepareLaunch(request: LaunchRequest): Promise<LaunchPlan>;
  /**
   * `workDir`: the session's (normalised) folder. A folder-trust dialog is answered by ag only
   * when it names that folder, never another one the agent may have been started in.
   * `resuming`: launched to continue a conversation (resume, fork) and not shown ready yet: an
   * agent that draws its input box before it has loaded the conversation is still starting.
   */
  readScreen(
    text: string,
    options?: { paneDead?: boolean; workDir?: string; resuming?: boolean },
  ): ScreenReading;
  /** Whether what the agent recorded as submitted (hook, transcript) is this text as ag typed it. */
  isSubmission(typed: string, recorded: string): boolean;
  /**
   * Input the agent records late or never (a shell command, a built-in slash command): for it,
   * the input box emptied by Enter is taken as delivery when no record comes in time.
   */
  recordsLate(text: string): boolean;
  /** Its hook callbacks (POST /v1/hooks/<name>/<event>); no events for an agent without hooks. */
  hooks: {
    readonly events: readonly string[];
    /** What one callback says (observation null when it carries nothing for the state). */
    read(event: string, payload: Record<string, unknown>): HookReading;
  };
  transcript: {
    format: TranscriptFormat;
    /** The session's transcript file, if it exists yet. */
    find(workDir: string, sessionId: string): Promise<string | null>;
    createReader(): TranscriptReader;
    /**
     * Every conversation the CLI keeps on this host, whoever started it: search's opt-in import
     * of the user's own history (read only). Absent: ag cannot read this agent's own store.
     */
    history?(): Promise<HistoryConversation[]>;
    /**
     * The CLI's own conversation ids a session's transcript file names, when that file is ag's and
     * the CLI keeps the conversation elsewhere too (OpenCode): the import skips them.
     */
    conversationsIn?(path: string): Promise<string[]>;
    /**
     * A copy of the conversation at `path` as its first `turns` turns left it, written as the
     * conversation `conversationId` (which a resume then continues): its path. Absent: the agent's
     * conversation cannot be rewound to a turn (docs/agents.md).
     */
    conversationAt?(path: string, turns: number, conversationId: string): Promise<string>;
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
    /** Empties a half-typed input line (before a retyped prompt). */
    clearInput: string[];
    /**
     * Keys that reach a dialog sooner than this after it was drawn are dropped by the agent (its
     * guard against keys typed ahead): an answer waits until the dialog has been on screen this long.
     */
    dialogSettleMs?: number;
  };
}
