import type { PaneModes, PaneSnapshot } from "./tmux.ts";

/**
 * Pure: how a pane's snapshot is asked of tmux and read from its replies (output.ts runs it).
 */

/** What a repaint needs besides the text; every field is a number (flags are 0 or 1). */
const SNAPSHOT_FIELDS = [
  "pane_width",
  "pane_height",
  "cursor_x",
  "cursor_y",
  "cursor_flag",
  "alternate_on",
  "keypad_cursor_flag",
  "keypad_flag",
  "insert_flag",
  "wrap_flag",
  "origin_flag",
  "scroll_region_upper",
  "scroll_region_lower",
  "mouse_standard_flag",
  "mouse_button_flag",
  "mouse_all_flag",
  "mouse_sgr_flag",
  "mouse_utf8_flag",
] as const;
const SNAPSHOT_FORMAT = SNAPSHOT_FIELDS.map((field) => `#{${field}}`).join(" ");

/**
 * A snapshot cut exactly into the pane's output stream. `pause` stops this client's output of
 * the pane (tmux drops what it has not sent yet: it is on the screen anyway); its reply comes
 * after every byte sent before it. `together` is written in one go, so tmux runs it with no pane
 * read in between: the screen, its state, and `continue`, after which output flows again from
 * exactly that instant. `-N` keeps trailing cells (a coloured background); no `-J`, which would
 * join wrapped rows: a repaint needs the rows as shown. `-a -q` is the normal screen under an
 * alternate one (empty when there is none).
 */
export function snapshotCommands(paneId: string): { pause: string[]; together: string[][] } {
  return {
    pause: ["refresh-client", "-A", `${paneId}:pause`],
    together: [
      ["display-message", "-p", "-t", paneId, SNAPSHOT_FORMAT],
      ["capture-pane", "-p", "-e", "-N", "-t", paneId],
      ["capture-pane", "-p", "-e", "-N", "-a", "-q", "-t", paneId],
      ["refresh-client", "-A", `${paneId}:continue`],
    ],
  };
}

export function parseSnapshot(info: string | undefined, lines: string[], normal: string[]): PaneSnapshot {
  const values = (info ?? "").split(" ").map(Number);
  if (values.length !== SNAPSHOT_FIELDS.length || values.some((v) => !Number.isInteger(v)))
    throw new Error(`tmux gave no pane state: ${info}`);
  const field = Object.fromEntries(SNAPSHOT_FIELDS.map((name, i) => [name, values[i]!])) as Record<
    (typeof SNAPSHOT_FIELDS)[number],
    number
  >;
  const [width, height] = [field.pane_width, field.pane_height];
  const modes: PaneModes = {
    alternateScreen: field.alternate_on === 1,
    cursorKeys: field.keypad_cursor_flag === 1,
    keypad: field.keypad_flag === 1,
    insert: field.insert_flag === 1,
    wrap: field.wrap_flag === 1,
    origin: field.origin_flag === 1,
    scrollRegion: { top: field.scroll_region_upper, bottom: field.scroll_region_lower },
    mouse: field.mouse_all_flag
      ? "any"
      : field.mouse_button_flag
        ? "button"
        : field.mouse_standard_flag
          ? "standard"
          : "off",
    mouseSgr: field.mouse_sgr_flag === 1,
    mouseUtf8: field.mouse_utf8_flag === 1,
  };
  return {
    width,
    height,
    cursor: { x: field.cursor_x, y: field.cursor_y, visible: field.cursor_flag === 1 },
    lines: rows(lines, height),
    normalLines: modes.alternateScreen ? rows(normal, height) : null,
    modes,
  };
}

/** Exactly `height` rows (a capture may race a resize by a row). */
function rows(lines: string[], height: number): string[] {
  const out = lines.slice(0, height);
  while (out.length < height) out.push("");
  return out;
}
