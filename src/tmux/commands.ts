import { statSync } from "node:fs";
import { escapeTmuxFormat, windowCommand } from "./argv.ts";
import type { NewWindowOptions, TmuxPane } from "./tmux.ts";

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
export function checkNewWindow(o: NewWindowOptions): void {
  if (CONTROL_CHARS.test(o.tag)) throw new TypeError("a window tag cannot hold control characters");
  for (const key of Object.keys(o.env ?? {})) {
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(key)) throw new TypeError(`invalid environment name: ${key}`);
  }
  if (o.command.length === 0) throw new TypeError("a window needs a command");
  if (!statSync(o.cwd, { throwIfNoEntry: false })?.isDirectory())
    throw new Error(`no such directory: ${o.cwd}`);
}

export function newWindowCommand(target: string, o: NewWindowOptions): string[] {
  const env = Object.entries(o.env ?? {}).flatMap(([key, value]) => ["-e", `${key}=${value}`]);
  return [
    ...["new-window", "-d", "-P", "-F", "#{window_id}|#{pane_id}|#{pane_pid}", "-t", `${target}:`],
    // -n and -c are expanded as formats by tmux; -e values and the argv are not.
    ...["-n", escapeTmuxFormat(o.name), "-c", escapeTmuxFormat(o.cwd), ...env],
    ...["--", ...windowCommand(o.command)],
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
export function sizeCommand(windowId: string, o: NewWindowOptions): string[] {
  const [width, height] = [o.width ?? DEFAULT_WIDTH, o.height ?? DEFAULT_HEIGHT];
  return ["resize-window", "-t", windowId, "-x", String(width), "-y", String(height)];
}

/** The tag is the last field, so a `|` inside it cannot shift the others. */
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

export function captureCommand(paneId: string, o: { escapes?: boolean; historyLines?: number }): string[] {
  const args = ["capture-pane", "-p"];
  if (o.escapes) args.push("-e");
  if (o.historyLines && o.historyLines > 0) args.push("-S", `-${Math.floor(o.historyLines)}`);
  return [...args, "-t", paneId];
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
