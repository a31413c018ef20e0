import type { DriverName } from "../../agents/agent.ts";
import { acpTranscript } from "../../drivers/acp/index.ts";
import { AgError, type ErrorCode } from "../../shared/errors.ts";
import type { TenantUsers } from "../../shared/run-as.ts";
import type { LaunchSpec } from "../launcher.ts";
import type { DeliveryResult } from "../live/delivery.ts";
import type { LiveSession } from "../live/session.ts";
import type { SessionRecord } from "../repo.ts";
import type { PendingPermission, QuestionAnswer } from "../session.ts";
import { DRIVER_TRAITS } from "./traits.ts";

/**
 * The seam between the session logic and how an agent runs. The state fusion, the bus, the
 * transcript cursor and the API are the same for every session; a driver starts the agent, hands
 * it prompts and answers, cuts a turn short, ends it, and turns what the agent does into
 * observations of its live session. `tmux`: the agent's terminal UI in a window, read from its
 * hooks, transcript and screen; `acp`: a child process speaking the Agent Client Protocol.
 */
export { DRIVER_TRAITS };

export interface SessionDriver {
  readonly name: DriverName;
  /**
   * Starts the agent of a session just followed. A failure is thrown through `failed`, which
   * records it on the session and says which code the client gets.
   */
  launch(session: LiveSession, spec: LaunchSpec, failed: LaunchFailure): Promise<void>;
  /** What follows the session's `launched` observation (the first look at it). */
  launched(session: LiveSession): void;
  /** Hands the agent one prompt; says whether it arrived and in how many attempts. */
  deliver(session: LiveSession, text: string): Promise<DeliveryResult>;
  /** Allows or refuses the pending permission. */
  decide(session: LiveSession, pending: PendingPermission, approve: boolean): Promise<void>;
  /** Answers the pending question (or permission) with one of its options, or text. */
  answer(session: LiveSession, pending: PendingPermission, answer: QuestionAnswer): Promise<void>;
  /** Cuts the running turn short. */
  interrupt(session: LiveSession): Promise<void>;
  /** Dismisses what the agent shows (terminal only). */
  escape(session: LiveSession): Promise<void>;
  /**
   * Ends the agent of a session ag stops. `close` records the end (ag's doing, not a crash) and
   * is called once, when the driver is about to take the agent away.
   */
  end(session: LiveSession, close: () => void): Promise<void>;
  /**
   * At start: follows its stored running sessions again (tmux: re-adopted by window tag; acp:
   * reopened), then carries what happens to them from then on.
   */
  start(records: readonly SessionRecord[]): Promise<void>;
  /**
   * Follows the agent of a record made now for an agent that ran without one (an untracked
   * agent, docs/storage.md) as it follows its records at start. Headless: CONFLICT, its pipe is gone.
   */
  adopt(record: SessionRecord): Promise<void>;
  /** Stops carrying events (ag stops). */
  stop(): void;
  /** What the agent of an ended session left: its exit status and its last lines of output. */
  lastWords(session: LiveSession): Promise<LastWords>;
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
export function assertTerminal(rec: Pick<SessionRecord, "id" | "driver">, what: string): void {
  if (!DRIVER_TRAITS[rec.driver].terminal)
    throw new AgError(
      "NOT_A_TERMINAL_SESSION",
      `session ${rec.id} runs headless (driver ${rec.driver}): it has no terminal for ${what}`,
    );
}

/**
 * Where a session's transcript comes from: the agent's own file for a terminal session; for a
 * headless one, ag's own record of the protocol.
 */
/**
 * The uid that must own the session's transcript file (transcript/tail.ts openTranscript): a
 * terminal agent of a tenant with runAs writes it as that user; a headless session's is ag's own
 * record, never the agent's to name.
 */
export function transcriptOwner(
  rec: Pick<SessionRecord, "driver" | "tenantId">,
  owners: TenantUsers | undefined,
): number | undefined {
  return rec.driver === "acp" ? undefined : owners?.(rec.tenantId)?.uid;
}

export function transcriptSource<T extends { transcript: unknown }>(
  rec: Pick<SessionRecord, "driver">,
  agent: T,
): T | { transcript: typeof acpTranscript } {
  return rec.driver === "acp" ? { transcript: acpTranscript } : agent;
}
