/**
 * The seam between ag and tmux. The real implementation (control.ts) drives ONE long-lived
 * control-mode client (`tmux -L <socket> -C`) on ag's private server; the fake
 * (tests/fakes/tmux.ts) keeps windows in memory. Both pass tests/contract/tmux.contract.ts.
 * tmux knows nothing of agents or sessions: a window, or a pane split into one, only carries an
 * opaque tag.
 */

export interface TmuxPane {
  /** tmux's window id, e.g. "@3". */
  windowId: string;
  /** tmux's pane id, e.g. "%5". Commands target panes by this id. */
  paneId: string;
  /** PID of the process running in the pane (the agent), when alive. */
  pid: number | null;
  /**
   * The pane's `@svc_session_id` user option, else its window's ("" when untagged): a pane
   * split into a window carries its own tag; a window's first pane carries the window's.
   */
  tag: string;
  /** With remain-on-exit on, a pane whose process exited stays, dead, with its exit status. */
  dead: boolean;
  deadStatus: number | null;
}

export interface NewWindowOptions {
  /** Stored in the window's `@svc_session_id` option; how windows are re-adopted after a restart. */
  tag: string;
  name: string;
  cwd: string;
  /** argv of the program; run directly, never typed into a shell. */
  command: string[];
  /** Passed with `new-window -e`, so nothing secret is typed into the pane or its scrollback. */
  env?: Record<string, string>;
  width?: number;
  height?: number;
}

/**
 * A new pane in an existing window (a child session beside its parent). `width`/`height` are the
 * size each pane of the window keeps (default 120x40): the window grows to hold them all.
 */
export interface SplitWindowOptions extends Omit<NewWindowOptions, "name"> {
  /** Stored in the PANE's `@svc_session_id` option (the window's stays its first pane's). */
  tag: string;
  /** Side by side (`split-window -h`); default: stacked top to bottom, the full width each. */
  horizontal?: boolean;
}

export type TmuxEvent =
  /** The pane's screen changed (coalesced: at most one per pane per few ms, never a flood). */
  | { type: "pane-output"; paneId: string }
  /** The pane's process exited (remain-on-exit keeps the pane). */
  | { type: "pane-died"; paneId: string; status: number | null }
  /** The window is gone (killed, or closed by tmux). */
  | { type: "window-closed"; windowId: string }
  /** The control client lost the server (tmux killed/crashed). */
  | { type: "server-lost"; error: string }
  /** The control client is connected again (after start or after a loss). */
  | { type: "connected" };

export interface TmuxHealthState {
  healthy: boolean;
  error: string | null;
}

export interface Tmux {
  /** Connects (starting the server and the ag session if needed). */
  start(): Promise<void>;
  close(): Promise<void>;
  health(): TmuxHealthState;
  /** Subscribe to events; returns the unsubscribe function. */
  on(listener: (event: TmuxEvent) => void): () => void;

  newWindow(options: NewWindowOptions): Promise<TmuxPane>;
  /**
   * A new pane in `windowId` (a window of ag's session, not the placeholder), tagged with its
   * own tag. Its panes are laid out evenly in one row or column, each at least width x height.
   */
  splitWindow(windowId: string, options: SplitWindowOptions): Promise<TmuxPane>;
  /** Every pane of every window in ag's session, each with its own tag (else its window's). */
  listPanes(): Promise<TmuxPane[]>;
  /** The visible screen (`capture-pane -p`), optionally with escapes (-e) or N lines of history. */
  capturePane(paneId: string, options?: { escapes?: boolean; historyLines?: number }): Promise<string>;
  /** Named keys (`Enter`, `Escape`, `C-c`, `BTab`, `Up`, "1"…), each a separate key press. */
  sendKeys(paneId: string, keys: string[]): Promise<void>;
  /** Literal text as typed keys (`send-keys -l`); no key names interpreted. */
  sendLiteral(paneId: string, text: string): Promise<void>;
  /** Text as ONE bracketed paste (buffer + `paste-buffer -p -d`), any size up to 256 KiB. */
  paste(paneId: string, text: string): Promise<void>;
  /** Closes the window and every pane in it; harmless when it is already gone. */
  killWindow(windowId: string): Promise<void>;
  /** Closes one pane (the window closes with its last pane); harmless when already gone. */
  killPane(paneId: string): Promise<void>;
}
