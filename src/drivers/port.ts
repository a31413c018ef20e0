import type { AgentAdapter, ScreenReading, ToolCategory } from "../agents/agent.ts";
import type { DriverName, PendingPermission, PermissionMode } from "../agents/vocabulary.ts";
import type { Observation, ObservationSource } from "./observation.ts";

/**
 * The port: all a driver sees of the sessions domain, and all it may tell it. `sessions/`
 * implements it (its live sessions and their records) and hands it in; nothing in drivers/
 * imports sessions/. A driver turns what its agent does into observations of a `DriverSession`;
 * the session's state, events and API stay the session logic's.
 */

/** What a driver reads of a session's stored record (sessions' `SessionRecord` has it all). */
export interface DriverRecord {
  readonly id: string;
  readonly name: string;
  readonly agent: string;
  readonly driver: DriverName;
  readonly tenantId: string | null;
  readonly workDir: string;
  readonly permissionMode: PermissionMode;
  readonly agentCommand: string | null;
  /** The model the agent runs (its own name for it); null: the agent's default. */
  readonly model: string | null;
  readonly hookSecret: string;
  readonly env?: Record<string, string> | null;
  readonly offerMcp?: boolean;
  /** Where the agent draws (terminal sessions, once placed). */
  readonly paneId: string | null;
  readonly windowId: string | null;
  readonly transcriptPath: string | null;
}

/** What the state of a session says to its driver. */
export interface DriverStatus {
  /** The session's status (idle, working, permission_prompt…). */
  readonly status: string;
  readonly pending: PendingPermission | null;
  /** The pending dialog has been seen on screen (and when). */
  readonly dialogSeen: boolean;
  readonly dialogSeenAt: number | null;
}

/** One running session, as its driver sees it (sessions/live: LiveSession). */
export interface DriverSession {
  readonly id: string;
  /** The adapter of the agent CLI it runs. */
  readonly agent: AgentAdapter;
  record(): DriverRecord;
  status(): DriverStatus;
  /** The session has ended: nothing will take a prompt any more. */
  ended(): boolean;
  /** Something happened: the state fusion weighs it. */
  observe(observation: Observation, source: ObservationSource): void;
  /** Records the pane the agent runs in (after its window opened, or moved on re-adoption). */
  placed(pane: { windowId: string; paneId: string }): void;
  /** The pane changed: read the screen again (one capture at a time). */
  paneChanged(): void;
  /** Captures and reads the screen now, feeding what it shows into the state. */
  readScreen(): Promise<ScreenReading | null>;
  /** Resolves when the screen shows something new or the state learns something, or after `ms`. */
  nextChange(ms: number): Promise<void>;
  /** Calls `listener` with the text of every prompt the agent confirms; returns unsubscribe. */
  onSubmitted(listener: (text: string) => void): () => void;
  /** One keyboard per session: deliveries and key presses run one at a time, never interleaved. */
  typing<T>(work: () => Promise<T>): Promise<T>;
  /** Follows the transcript at `path` (history: lines already there are the past). */
  attachTranscript(path: string, history: boolean): Promise<void>;
  /** The transcript grew: read it now. */
  catchUpTranscript(): Promise<void>;
  /**
   * Re-adopted, its transcript's past read: a turn that past shows begun and not ended is still
   * under way. That is the agent's own record, stronger than a frame of the screen, and the
   * hooks that told of it went to the ag before the restart.
   */
  resumeTurn(): void;
  /** Why the session's permission policy refuses this tool (answered at once), or null. */
  refusal(tool: { name: string; category: ToolCategory }): string | null;
}

/** The sessions a driver follows: found by pane or window, or followed again at start. */
export interface DriverSessions {
  /** Starts following a stored session (adopt: found running after a restart). */
  follow(record: DriverRecord, mode: "launch" | "adopt"): DriverSession;
  byPane(paneId: string): DriverSession | undefined;
  inWindow(windowId: string): DriverSession[];
  /** The stored sessions that run now. */
  running(): DriverRecord[];
  /** The session's own folder (launch files, ag's transcript of a headless one). */
  dir(id: string): string;
  /** The folder its agent may run in now (its tenant's policy; throws when it may not). */
  launchDir(record: DriverRecord): string;
  /** The agent of session `id` (process `pid`) is about to be ended: what it started goes with it. */
  ending(id: string, pid: number | null): Promise<void>;
}

/** ag's own MCP server, offered to a session's agent (offerMcp). */
export interface McpAccess {
  /**
   * The server's command and environment for this session: a fresh key (any earlier one deleted),
   * kept in a file of the session's folder `dir` (no secret in the command or the environment).
   */
  open(
    rec: { id: string; tenantId: string | null },
    dir: string,
  ): { command: string[]; env: Record<string, string> };
  /** Deletes the session's key (it ended). */
  close(id: string): void;
}
