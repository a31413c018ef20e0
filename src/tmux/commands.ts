import { statSync } from "node:fs";
import { escapeTmuxFormat, isWindowId, windowCommand } from "./argv.ts";
import type { NewWindowOptions, SplitWindowOptions, TmuxPane } from "./tmux.ts";

/** A program to start in a new pane, of a new window or split into one. */
type Launch = Omit<NewWindowOptions, "name">;

/**
 * What ag asks tmux: argv builders, reply parsers and request checks; control.ts sends them.
 * Every command is one argv (one control-mode line, one reply block): never `a ; b`, which
 * would answer two blocks.
 */

export const DEFAULT_WIDTH = 120;
export const DEFAULT_HEIGHT = 40;
/** Larger texts are refused rather than half-delivered; the interface promises 256 KiB. */
export const MAX_PASTE_BYTES = 256 * 1024;
export const DEAD_SUBSCRIPTION = "ag-pane-dead";
export const DEATH_FORMAT = "#{pane_dead} #{pane_dead_status} #{pane_dead_signal}";

/**
 * A session with no windows is destroyed, so one idle window keeps ag's session (and the
 * server, with `exit-empty off` as a second guard) alive when the last agent window closes. It
 * carries `@ag_placeholder` and is left out of listPanes.
 */
const PLACEHOLDER_NAME = "ag-idle";
const PLACEHOLDER_COMMAND = ["sleep", "2147483647"];

/** The client's start-up command: attach to ag's session, creating it (and the server) if needed. */
export function startupCommand(session: string): string[] {
  const size = ["-x", String(DEFAULT_WIDTH), "-y", String(DEFAULT_HEIGHT)];
  return ["new-session", "-A", "-s", session, "-n", PLACEHOLDER_NAME, ...size, ...PLACEHOLDER_COMMAND];
}

/** Applied on every connect (idempotent), so no config file is needed on disk. */
export const SERVER_SETUP: readonly string[][] = [
  ["set-option", "-s", "exit-empty", "off"],
  ["set-option", "-s", "focus-events", "on"],
  ["set-option", "-s", "default-terminal", "tmux-256color"],
  ["set-option", "-g", "history-limit", "50000"],
  ["set-option", "-g", "default-size", `${DEFAULT_WIDTH}x${DEFAULT_HEIGHT}`],
  ["set-option", "-wg", "remain-on-exit", "on"],
  // A person attaching (ag attach) must not hand their DISPLAY, SSH agent… to later agents.
  ["set-option", "-g", "update-environment", ""],
  // NOT `window-size manual` globally: tmux 3.3a's server crashes creating a window with it while
  // only a size-less control client is attached. newWindow pins each window's size instead.
  // Pane death, event-driven: tmux re-evaluates the format for every pane of the session and
  // reports changes (at most once a second); there is no control notification for it.
  ["refresh-client", "-B", `${DEAD_SUBSCRIPTION}:%*:${DEATH_FORMAT}`],
];

/**
 * A DEATH_FORMAT value: null while the pane lives; "unreaped" when tmux has seen its terminal
 * close but not yet the process exit (no status nor signal yet). Killed by a signal: status null.
 */
export function parseDeath(value: string): { status: number | null } | "unreaped" | null {
  const [dead, status = "", signal = ""] = value.split(" ");
  if (dead !== "1") return null;
  if (status === "" && signal === "") return "unreaped";
  return { status: status === "" ? null : Number(status) };
}

/**
 * The names `show-environment` lists (`NAME=value`, or `-NAME` for one marked removed) that are
 * not in `env`: the ones to unset.
 */
export function staleNames(lines: readonly string[], env: Record<string, string>): string[] {
  const names = lines.map((line) => (line.startsWith("-") ? line.slice(1) : (line.split("=")[0] ?? "")));
  return names.filter((name) => name !== "" && !Object.hasOwn(env, name));
}

export const WINDOW_LIST_FORMAT = "#{window_id}|#{@ag_placeholder}|#{@svc_session_id}|#{window_name}";

/** The placeholder's window id, the unmarked idle window to mark, or null (create one). */
export function findPlaceholder(lines: string[]): { windowId: string; marked: boolean } | null {
  const windows = lines.map((line) => line.split("|"));
  const marked = windows.find(([, placeholder]) => placeholder === "1");
  if (marked?.[0]) return { windowId: marked[0], marked: true };
  const unmarked = windows.find(([, , tag, name]) => tag === "" && name === PLACEHOLDER_NAME);
  return unmarked?.[0] ? { windowId: unmarked[0], marked: false } : null;
}

export function placeholderWindowCommand(target: string): string[] {
  return [
    "new-window",
    "-d",
    "-P",
    "-F",
    "#{window_id}",
    "-t",
    `${target}:`,
    "-n",
    PLACEHOLDER_NAME,
    ...PLACEHOLDER_COMMAND,
  ];
}

// biome-ignore lint/suspicious/noControlCharactersInRegex: a tag must stay on one reply line
const CONTROL_CHARS = /[\x00-\x1f\x7f]/;

/** Refuses what tmux would mangle or silently replace (a missing cwd becomes $HOME). */
export function checkLaunch(o: Launch): void {
  if (CONTROL_CHARS.test(o.tag)) throw new TypeError("a window tag cannot hold control characters");
  for (const key of Object.keys(o.env ?? {})) {
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(key)) throw new TypeError(`invalid environment name: ${key}`);
  }
  if (o.command.length === 0) throw new TypeError("a window needs a command");
  if (!statSync(o.cwd, { throwIfNoEntry: false })?.isDirectory())
    throw new Error(`no such directory: ${o.cwd}`);
}

/** What new-window and split-window share: cwd, environment and the program's argv. */
function launchArgs(o: Launch): string[] {
  const env = Object.entries(o.env ?? {}).flatMap(([key, value]) => ["-e", `${key}=${value}`]);
  // -c is expanded as a format by tmux; -e values and the argv are not.
  return ["-c", escapeTmuxFormat(o.cwd), ...env, "--", ...windowCommand(o.command)];
}

export function newWindowCommand(target: string, o: NewWindowOptions): string[] {
  return [
    ...["new-window", "-d", "-P", "-F", "#{window_id}|#{pane_id}|#{pane_pid}", "-t", `${target}:`],
    // -n is expanded as a format too.
    ...["-n", escapeTmuxFormat(o.name), ...launchArgs(o)],
  ];
}

export function parseNewWindow(line: string | undefined): {
  windowId: string;
  paneId: string;
  pid: number | null;
} {
  const [windowId, paneId, pid] = (line ?? "").split("|");
  if (!windowId || !paneId) throw new Error(`tmux new-window gave no ids: ${line}`);
  return { windowId, paneId, pid: pid ? Number(pid) : null };
}

/** resize-window also pins the size: it sets window-size manual for that window alone. */
export function sizeCommand(windowId: string, o: Launch): string[] {
  const [width, height] = [o.width ?? DEFAULT_WIDTH, o.height ?? DEFAULT_HEIGHT];
  return ["resize-window", "-t", windowId, "-x", String(width), "-y", String(height)];
}

/**
 * The tag is the last field, so a `|` inside it cannot shift the others. Pane options inherit
 * from window options, so `#{@svc_session_id}` is the pane's own tag (a split pane's) when set,
 * else its window's (the first pane's, and every window made before splits existed).
 */
export const PANE_FORMAT =
  "#{window_id}|#{pane_id}|#{pane_pid}|#{pane_dead}|#{pane_dead_status}|#{@ag_placeholder}|#{@svc_session_id}";

/** One line of `list-panes -F PANE_FORMAT`; null for the placeholder. */
export function parsePaneLine(line: string): TmuxPane | null {
  const [windowId = "", paneId = "", pid, isDead, status, placeholder, ...tag] = line.split("|");
  if (placeholder === "1") return null;
  const dead = isDead === "1";
  return {
    windowId,
    paneId,
    pid: !dead && pid ? Number(pid) : null,
    tag: tag.join("|"),
    dead,
    deadStatus: dead && status ? Number(status) : null,
  };
}

/** A window of ag's session (`=ag:@3`): any other session's window is "not found". */
export function sessionWindow(target: string, windowId: string): string {
  if (!isWindowId(windowId)) throw new TypeError(`not a tmux window id: ${windowId}`);
  return `${target}:${windowId}`;
}

/**
 * Asked before a split: `list-panes` fails on a window that is not in ag's session (unlike
 * `display-message`, which silently falls back to the current window).
 */
export function splitCheckCommand(window: string): string[] {
  return ["list-panes", "-t", window, "-F", "#{@ag_placeholder}"];
}

/** Splitting the placeholder would hide the new pane (it inherits `@ag_placeholder`). */
export function checkSplitTarget(windowId: string, lines: string[]): void {
  if (lines[0] === "1") throw new Error(`cannot split ag's placeholder window ${windowId}`);
}

/**
 * `-d`: the window's first pane stays the active one (list-windows reads its options). `-f`: the
 * new pane spans the whole window, after every other pane, so panes stay in creation order.
 */
export function splitWindowCommand(window: string, o: SplitWindowOptions): string[] {
  const format = "#{window_id}|#{pane_id}|#{pane_pid}|#{window_panes}|#{window_width}|#{window_height}";
  const direction = o.horizontal ? "-h" : "-v";
  return ["split-window", "-d", "-f", direction, "-P", "-F", format, "-t", window, ...launchArgs(o)];
}

export interface SplitPane {
  windowId: string;
  paneId: string;
  pid: number | null;
  /** The window's pane count and size right after the split (before it is laid out). */
  panes: number;
  width: number;
  height: number;
}

export function parseSplit(line: string | undefined): SplitPane {
  const [windowId, paneId, pid, panes, width, height] = (line ?? "").split("|");
  if (!windowId || !paneId) throw new Error(`tmux split-window gave no ids: ${line}`);
  return {
    windowId,
    paneId,
    pid: pid ? Number(pid) : null,
    panes: Number(panes) || 2,
    width: Number(width) || DEFAULT_WIDTH,
    height: Number(height) || DEFAULT_HEIGHT,
  };
}

/**
 * The size of a split window. Halving a 120x40 window would leave 120x19 panes, too short for an
 * agent's UI (input box, status lines, some transcript), and 59 columns side by side is worse.
 * So the window grows instead: all its panes are laid out evenly in one column (one row when this
 * split is `horizontal`), each at least this split's size (default 120x40), plus the one-cell border
 * between neighbours: two stacked panes make a 120x81 window. Nothing needs ag's windows to fit
 * a screen (ag's only client is size-less; resize-window pins `window-size manual`), and a
 * human who attaches sees part of a larger window. The window never shrinks: after killPane the
 * remaining panes take the space.
 */
export function splitLayoutCommands(split: SplitPane, o: SplitWindowOptions): string[][] {
  const [w, h, n] = [o.width ?? DEFAULT_WIDTH, o.height ?? DEFAULT_HEIGHT, split.panes];
  const width = Math.max(split.width, o.horizontal ? n * w + n - 1 : w);
  const height = Math.max(split.height, o.horizontal ? h : n * h + n - 1);
  return [
    ["resize-window", "-t", split.windowId, "-x", String(width), "-y", String(height)],
    ["select-layout", "-t", split.windowId, o.horizontal ? "even-horizontal" : "even-vertical"],
  ];
}

/** The pane's own tag: what listPanes reports for it instead of its window's. */
export function paneTagCommand(paneId: string, tag: string): string[] {
  return ["set-option", "-p", "-t", paneId, "--", "@svc_session_id", tag];
}

export function captureCommand(paneId: string, o: { escapes?: boolean; historyLines?: number }): string[] {
  const args = ["capture-pane", "-p"];
  if (o.escapes) args.push("-e");
  if (o.historyLines && o.historyLines > 0) args.push("-S", `-${Math.floor(o.historyLines)}`);
  return [...args, "-t", paneId];
}

/** Bytes per `send-keys -H` command: each is one argument of two hex digits. */
const SEND_BYTES_CHUNK = 4096;

/** `send-keys -H`: each argument one byte, written to the pane as it is (KEYC_LITERAL). */
export function sendBytesCommands(paneId: string, bytes: Uint8Array): string[][] {
  const commands: string[][] = [];
  for (let at = 0; at < bytes.length; at += SEND_BYTES_CHUNK) {
    const hex = Array.from(bytes.subarray(at, at + SEND_BYTES_CHUNK), (b) => b.toString(16).padStart(2, "0"));
    commands.push(["send-keys", "-t", paneId, "-H", ...hex]);
  }
  return commands;
}

// biome-ignore lint/suspicious/noControlCharactersInRegex: ESC starts the bracketed-paste markers
const BRACKET_MARKERS = /\x1b\[20[01]~/g;

/**
 * The text as it will be pasted: without bracketed-paste markers, which would end the bracket
 * early and let the rest act as keys. Throws past MAX_PASTE_BYTES.
 */
export function pasteText(text: string): string {
  const clean = text.replace(BRACKET_MARKERS, "");
  if (Buffer.byteLength(clean) > MAX_PASTE_BYTES)
    throw new RangeError(`paste exceeds ${MAX_PASTE_BYTES} bytes`);
  return clean;
}

/** A uniquely named buffer, pasted bracketed (-p) and deleted (-d) in one go. */
export function pasteCommands(
  paneId: string,
  text: string,
): { buffer: string; set: string[]; paste: string[] } {
  const buffer = `ag-paste-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 10)}`;
  return {
    buffer,
    set: ["set-buffer", "-b", buffer, "--", text],
    paste: ["paste-buffer", "-p", "-d", "-b", buffer, "-t", paneId],
  };
}
