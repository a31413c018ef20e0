import type { AgentAdapter } from "../agents/agent.ts";
import type { DriverName, PendingPermission } from "../agents/vocabulary.ts";
import { AgError, type ErrorCode } from "../shared/errors.ts";
import type { TenantUsers } from "../shared/run-as.ts";
import { acpTranscript } from "./acp/index.ts";
import type { DriverRecord, DriverSession } from "./port.ts";
import type { DeliveryResult } from "./tmux/delivery.ts";
import { DRIVER_TRAITS } from "./traits.ts";

export { DRIVER_NAMES, type DriverName } from "../agents/vocabulary.ts";
/**
 * The seam between the session logic and how an agent runs. The state fusion, the bus, the
 * transcript cursor and the API are the same for every session; a driver starts the agent, hands
 * it prompts and answers, cuts a turn short, ends it, and turns what the agent does into
 * observations of its live session. `tmux`: the agent's terminal UI in a window, read from its
 * hooks, transcript and screen; `acp`: a child process speaking the Agent Client Protocol.
 */
export { DRIVER_TRAITS };

/** How a session's agent is to be started (sessions' LaunchSpec). */
export interface DriverLaunch {
  /** The stored session to run (new, or ended and being resumed). */
  record: DriverRecord;
  /** Continue a conversation: the session's own (resume), or another's as a new branch (fork). */
  resume?: { conversationId: string; fork: boolean; transcriptPath?: string };
  /** Run in a new pane of this window (spawn) instead of a window of its own. */
  splitOf?: string;
  /** What the launch adds to the session's warnings. */
  warnings: string[];
}

/** An answer to a question (or a permission) with one of its options, or text. */
export type QuestionAnswer = { option: number } | { text: string };

export interface SessionDriver {
  readonly name: DriverName;
  /**
   * Starts the agent of a session just followed. A failure is thrown through `failed`, which
   * records it on the session and says which code the client gets.
   */
  launch(session: DriverSession, spec: DriverLaunch, failed: LaunchFailure): Promise<void>;
  /** What follows the session's `launched` observation (the first look at it). */
  launched(session: DriverSession): void;
  /** Hands the agent one prompt; says whether it arrived and in how many attempts. */
  deliver(session: DriverSession, text: string): Promise<DeliveryResult>;
  /** Allows or refuses the pending permission. */
  decide(session: DriverSession, pending: PendingPermission, approve: boolean): Promise<void>;
  /** Answers the pending question (or permission) with one of its options, or text. */
  answer(session: DriverSession, pending: PendingPermission, answer: QuestionAnswer): Promise<void>;
  /** Cuts the running turn short. */
  interrupt(session: DriverSession): Promise<void>;
  /** Dismisses what the agent shows (terminal only). */
  escape(session: DriverSession): Promise<void>;
  /**
   * Ends the agent of a session ag stops. `close` records the end (ag's doing, not a crash) and
   * is called once, when the driver is about to take the agent away.
   */
  end(session: DriverSession, close: () => void): Promise<void>;
  /**
   * At start: follows its stored running sessions again (tmux: re-adopted by window tag; acp:
   * reopened), then carries what happens to them from then on.
   */
  start(records: readonly DriverRecord[]): Promise<void>;
  /**
   * Follows the agent of a record made now for an agent that ran without one (an untracked
   * agent, docs/storage.md) as it follows its records at start. Headless: CONFLICT, its pipe is gone.
   */
  adopt(record: DriverRecord): Promise<void>;
  /** Stops carrying events (ag stops). */
  stop(): void;
  /** What the agent of an ended session left: its exit status and its last lines of output. */
  lastWords(session: DriverSession): Promise<LastWords>;
  /**
   * Where the agents of these running sessions of this driver are now (one look for all): the
   * pid at the root of each agent and, in a terminal, its pane. Health, metrics and the host's
   * view of the agents read it. Throws when the transport cannot be asked (tmux down).
   */
  locate(records: readonly DriverRecord[]): Promise<Map<string, AgentPlace>>;
  /** What the session's terminal shows now (terminal only). */
  capture(record: DriverRecord): Promise<string>;
  /** Presses keys in the session's terminal (terminal only). */
  sendKeys(record: DriverRecord, keys: string[]): Promise<void>;
  /**
   * Whether this agent's conversation can be continued by a later launch of the session (`launch`
   * with `resume` of its own conversation): what hibernation needs to end an idle agent.
   */
  resumes(agent: Pick<AgentAdapter, "capabilities" | "acp">): boolean;
}

/** Where a session's agent runs. */
export interface AgentPlace {
  /** The pid at the root of its processes; null when it is not running. */
  pid: number | null;
  /** Its pane (a terminal session's, alive or dead); null without one. */
  pane: { windowId: string; paneId: string; dead: boolean } | null;
}

/** What an agent that ended left behind, to tell a client why it did not start. */
export interface LastWords {
  /** Its exit status; null when it was ended by a signal or the status is not known. */
  status: number | null;
  /** Its last non-blank lines of output (a terminal's screen, a headless agent's stderr). */
  output: string[];
}

/** The last `count` non-blank lines of an agent's output. */
export function lastLines(text: string, count = 5): string[] {
  return text
    .split("\n")
    .map((line) => line.trimEnd())
    .filter((line) => line.trim() !== "")
    .slice(-count);
}

export type LaunchFailure = (error: unknown, code: ErrorCode, what: string) => AgError;

/** Refuses what only a terminal can do for a session without one. */
export function assertTerminal(rec: Pick<DriverRecord, "id" | "driver">, what: string): void {
  if (!DRIVER_TRAITS[rec.driver].terminal) throw notATerminal(rec, what);
}

/**
 * The refusal of what only a terminal can do (`what`: keys, a pane, attach…) for a session without
 * one, naming its driver and how to read it instead.
 */
export function notATerminal(rec: Pick<DriverRecord, "id" | "driver">, what: string): AgError {
  return new AgError(
    "NOT_A_TERMINAL_SESSION",
    `session ${rec.id} runs headless (driver ${rec.driver}): it has no terminal for ${what}; read it with ag read / ag tail (GET /v1/sessions/${rec.id}/read)`,
  );
}

/**
 * The uid that must own the session's transcript file (transcript/tail.ts openTranscript): a
 * terminal agent of a tenant with runAs writes it as that user; a headless session's is ag's own
 * record, never the agent's to name.
 */
export function transcriptOwner(
  rec: Pick<DriverRecord, "driver" | "tenantId">,
  owners: TenantUsers | undefined,
): number | undefined {
  return DRIVER_TRAITS[rec.driver].transcript === "ag" ? undefined : owners?.(rec.tenantId)?.uid;
}

/**
 * Where a session's transcript comes from: the agent's own file for a terminal session; for a
 * headless one, ag's own record of the protocol.
 */
export function transcriptSource<T extends { transcript: unknown }>(
  rec: Pick<DriverRecord, "driver">,
  agent: T,
): T | { transcript: typeof acpTranscript } {
  return DRIVER_TRAITS[rec.driver].transcript === "ag" ? { transcript: acpTranscript } : agent;
}

/**
 * Control characters would act as keys in the terminal (Escape, Ctrl+C …): refused. Newline
 * and tab are text.
 */
export function assertTypeable(text: string, field: string): void {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is the point
  const bad = text.match(/[\u0000-\u0008\u000b-\u001f\u007f]/);
  if (bad) {
    const code = bad[0].charCodeAt(0).toString(16).padStart(2, "0");
    throw new AgError(
      "VALIDATION_ERROR",
      `${field} contains the control character U+00${code.toUpperCase()}; only newline and tab are allowed`,
    );
  }
}
