import type { PaneModes, PaneSnapshot } from "../tmux/index.ts";

/**
 * Pure: the bytes that make a terminal of the pane's size show a snapshot, whatever it showed
 * before (a first paint, or a repaint over an earlier one). The rows are written from the top,
 * joined by CR LF, with no line feed after the last (it would scroll); modes that change how
 * later bytes act (insert, wrap, origin, scroll region) are set only after the text is painted.
 */

const RESET = [
  "\x1b[?1049l", // back to the normal screen
  "\x1b[0m", // default colours and attributes
  "\x1b[r", // the whole screen scrolls
  "\x1b[?6l", // origin mode off
  "\x1b[?7h", // wrap on
  "\x1b[4l", // replace, not insert
  "\x1b[?1l\x1b>", // normal cursor keys and keypad
  "\x1b[?1000l\x1b[?1002l\x1b[?1003l\x1b[?1005l\x1b[?1006l", // no mouse reports
  "\x1b[?25h", // cursor shown
].join("");
const CLEAR = "\x1b[H\x1b[2J";
const PEN_OFF = "\x1b[0m";

const MOUSE: Record<PaneModes["mouse"], string> = {
  off: "",
  standard: "\x1b[?1000h",
  button: "\x1b[?1002h",
  any: "\x1b[?1003h",
};

export function paintSnapshot(snapshot: PaneSnapshot): string {
  const { modes, cursor, height } = snapshot;
  let out = RESET + CLEAR;
  // The normal screen first, so that leaving the alternate one later shows what the pane shows.
  if (snapshot.normalLines) out += `${snapshot.normalLines.join("\r\n")}${PEN_OFF}\x1b[?1049h${CLEAR}`;
  out += snapshot.lines.join("\r\n") + PEN_OFF;
  const { top, bottom } = modes.scrollRegion;
  if (top !== 0 || bottom !== height - 1) out += `\x1b[${top + 1};${bottom + 1}r`;
  if (modes.origin) out += "\x1b[?6h";
  if (!modes.wrap) out += "\x1b[?7l";
  if (modes.insert) out += "\x1b[4h";
  if (modes.cursorKeys) out += "\x1b[?1h";
  if (modes.keypad) out += "\x1b=";
  out += MOUSE[modes.mouse];
  if (modes.mouseUtf8) out += "\x1b[?1005h";
  if (modes.mouseSgr) out += "\x1b[?1006h";
  // With origin mode on, rows count from the scroll region's top.
  const row = modes.origin ? cursor.y - top + 1 : cursor.y + 1;
  out += `\x1b[${row};${cursor.x + 1}H`;
  if (!cursor.visible) out += "\x1b[?25l";
  return out;
}
