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

/** What a terminal must be told, besides the screen's text, to behave as the pane does. */
export interface PaneModes {
  /** A program (a pager, an editor) shows the alternate screen. */
  alternateScreen: boolean;
  /** DECCKM: cursor keys send `ESC O A` rather than `ESC [ A`. */
  cursorKeys: boolean;
  /** DECKPAM: the keypad sends application sequences. */
  keypad: boolean;
  insert: boolean;
  /** Auto-wrap at the right margin (on unless a program turned it off). */
  wrap: boolean;
  /** DECOM: cursor rows count from the scroll region's top. */
  origin: boolean;
  /** Rows (0-based, inclusive) the program scrolls; the whole screen unless it set a region. */
  scrollRegion: { top: number; bottom: number };
  /** Which mouse reports the program asked for (1000, 1002, 1003), and their encodings. */
  mouse: "off" | "standard" | "button" | "any";
  mouseSgr: boolean;
  mouseUtf8: boolean;
}

/** One pane's screen at one instant: enough to repaint it in a terminal of the same size. */
export interface PaneSnapshot {
  width: number;
  height: number;
  /** 0-based, in the pane. */
  cursor: { x: number; y: number; visible: boolean };
  /** The visible screen: `height` rows, each with its SGR escapes and no newline. */
  lines: string[];
  /** While the alternate screen is shown, the normal one under it (the same shape); else null. */
  normalLines: string[] | null;
  modes: PaneModes;
}

/**
 * A watched pane's output, in order: the bytes its program writes, and every snapshot taken of
 * it, each in its exact place. A snapshot stands for everything before it; the bytes after it
 * apply on top. (Taking one pauses the pane's output for an instant, so bytes written meanwhile
 * exist only in the snapshot: a watcher must repaint from every snapshot it is given.)
 */
export type PaneOutputEvent =
  | { type: "bytes"; bytes: Uint8Array }
  | { type: "snapshot"; snapshot: PaneSnapshot };

export type TmuxEvent =
  /** The pane's screen changed (coalesced: at most one per pane per few ms, never a flood). */
  | { type: "pane-output"; paneId: string }
  /** The window's panes were laid out again (a split, a pane closed, a resize): sizes may differ. */
  | { type: "window-layout"; windowId: string }
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
  /**
   * The pane's output from now on (PaneOutputEvent): the bytes as its program wrote them
   * (escapes and all) and the snapshots taken of it. A pane's listeners share each event: read
   * it, never change it. Only watched panes' output is decoded. Returns the unsubscribe function.
   */
  watchOutput(paneId: string, listener: (event: PaneOutputEvent) => void): () => void;
  /** How many watchOutput listeners there are, over all panes (0 once every viewer has gone). */
  outputListeners(): number;
  /**
   * The pane's screen, size, cursor and modes at one instant; also given, in its place, to every
   * listener of the pane. Asked while one is being taken, it is taken once more after that one.
   */
  snapshotPane(paneId: string): Promise<PaneSnapshot>;
  /** Named keys (`Enter`, `Escape`, `C-c`, `BTab`, `Up`, "1"…), each a separate key press. */
  sendKeys(paneId: string, keys: string[]): Promise<void>;
  /** Literal text as typed keys (`send-keys -l`); no key names interpreted. */
  sendLiteral(paneId: string, text: string): Promise<void>;
  /**
   * Bytes as the pane's terminal input, exactly (`send-keys -H`): what a terminal emulator sends
   * for keys ("\r", "\x1b[A", "\x03"…), with no key-name or extended-key translation.
   */
  sendBytes(paneId: string, bytes: Uint8Array): Promise<void>;
  /** Text as ONE bracketed paste (buffer + `paste-buffer -p -d`), any size up to 256 KiB. */
  paste(paneId: string, text: string): Promise<void>;
  /** Closes the window and every pane in it; harmless when it is already gone. */
  killWindow(windowId: string): Promise<void>;
  /** Closes one pane (the window closes with its last pane); harmless when already gone. */
  killPane(paneId: string): Promise<void>;
}
