import { afterEach, describe, expect, test } from "bun:test";
import { Terminal } from "@xterm/xterm";
import { paintSnapshot } from "../../src/terminal/paint.ts";
import type { PaneModes, PaneSnapshot } from "../../src/tmux/tmux.ts";

/**
 * The snapshot's paint written into xterm.js (what the dashboard runs), headless: the terminal
 * must then show the pane's screen, cursor and modes, however it was left before.
 */
const terminals: Terminal[] = [];
afterEach(() => {
  for (const t of terminals.splice(0)) t.dispose();
});

function terminal(cols: number, rows: number): Terminal {
  const t = new Terminal({ cols, rows, allowProposedApi: true });
  terminals.push(t);
  return t;
}

const write = (t: Terminal, data: string) => new Promise<void>((resolve) => t.write(data, resolve));

function screen(t: Terminal): string[] {
  const buffer = t.buffer.active;
  return Array.from({ length: t.rows }, (_, y) =>
    buffer.getLine(buffer.viewportY + y)!.translateToString(true),
  );
}

const DEFAULT_MODES: PaneModes = {
  alternateScreen: false,
  cursorKeys: false,
  keypad: false,
  insert: false,
  wrap: true,
  origin: false,
  scrollRegion: { top: 0, bottom: 4 },
  mouse: "off",
  mouseSgr: false,
  mouseUtf8: false,
};

function snapshot(
  lines: string[],
  over: Omit<Partial<PaneSnapshot>, "modes"> & { modes?: Partial<PaneModes> } = {},
): PaneSnapshot {
  return {
    width: 10,
    height: 5,
    cursor: { x: 0, y: 0, visible: true },
    lines,
    normalLines: null,
    ...over,
    modes: { ...DEFAULT_MODES, ...over.modes },
  };
}

const RED_ROW = "\x1b[31mred\x1b[39m row";
// biome-ignore lint/suspicious/noControlCharactersInRegex: ESC starts the sequences removed
const plain = (text: string) => text.replace(/\x1b\[[0-9;?]*[a-zA-Z]/g, "");

describe("painting a snapshot into xterm.js", () => {
  test("each row in its row, colours kept, the cursor where the pane has it; full rows neither wrap nor scroll", async () => {
    const lines = ["0123456789", RED_ROW, "", "é 日本 ok", "9876543210"];
    const t = terminal(10, 5);
    await write(t, paintSnapshot(snapshot(lines, { cursor: { x: 3, y: 2, visible: true } })));
    expect(screen(t)).toEqual(lines.map(plain));
    expect(t.buffer.active.baseY).toBe(0);
    expect([t.buffer.active.cursorX, t.buffer.active.cursorY]).toEqual([3, 2]);
    const red = t.buffer.active.getLine(1)!.getCell(0)!;
    expect([red.isFgPalette(), red.getFgColor()]).toEqual([true, 1]);
    // The pen is reset after the paint: what the program writes next starts plain.
    await write(t, "x");
    expect(t.buffer.active.getLine(2)!.getCell(3)!.isFgDefault()).toBe(true);
  });

  test("a repaint over a terminal left in any state shows the same as a first paint", async () => {
    const snap = snapshot(["fresh", "screen"], { cursor: { x: 6, y: 1, visible: true } });
    const fresh = terminal(10, 5);
    await write(fresh, paintSnapshot(snap));
    const dirty = terminal(10, 5);
    // Old text, an alternate screen, a scroll region, insert mode, no wrap, mouse, app cursor keys.
    await write(dirty, "old\r\nstuff\x1b[?1049h\x1b[2;4r\x1b[4h\x1b[?7l\x1b[?1003h\x1b[?1h\x1b=\x1b[41mZZZ");
    await write(dirty, paintSnapshot(snap));
    expect(screen(dirty)).toEqual(screen(fresh));
    expect(dirty.buffer.active.type).toBe("normal");
    expect([dirty.buffer.active.cursorX, dirty.buffer.active.cursorY]).toEqual([6, 1]);
    expect(dirty.modes).toEqual(fresh.modes);
    expect(fresh.modes).toMatchObject({
      insertMode: false,
      wraparoundMode: true,
      mouseTrackingMode: "none",
      applicationCursorKeysMode: false,
      applicationKeypadMode: false,
      originMode: false,
    });
  });

  test("the pane's modes are the terminal's: keys, keypad, insert, wrap, mouse", async () => {
    const t = terminal(10, 5);
    const modes = {
      cursorKeys: true,
      keypad: true,
      insert: true,
      wrap: false,
      mouse: "button",
      mouseSgr: true,
    } as const;
    const data = paintSnapshot(snapshot(["abc"], { modes, cursor: { x: 1, y: 0, visible: false } }));
    await write(t, data);
    expect(t.modes).toMatchObject({
      applicationCursorKeysMode: true,
      applicationKeypadMode: true,
      insertMode: true,
      wraparoundMode: false,
      mouseTrackingMode: "drag",
    });
    expect(data.endsWith("\x1b[?25l")).toBe(true);
    // Insert mode applies to what comes next, not to the paint.
    await write(t, "X");
    expect(screen(t)[0]).toBe("aXbc");
  });

  test("a scroll region scrolls only its rows; origin mode places the cursor inside it", async () => {
    const lines = ["top", "a", "b", "c", "bottom"];
    const t = terminal(10, 5);
    const region = { scrollRegion: { top: 1, bottom: 3 }, origin: true };
    await write(t, paintSnapshot(snapshot(lines, { modes: region, cursor: { x: 0, y: 3, visible: true } })));
    expect(screen(t)).toEqual(lines);
    expect(t.buffer.active.cursorY).toBe(3);
    await write(t, "\nd");
    expect(screen(t)).toEqual(["top", "b", "c", "d", "bottom"]);
  });

  test("on the alternate screen, the normal one is painted under it and comes back when the program leaves", async () => {
    const t = terminal(10, 5);
    const snap = snapshot(["editor", "~", "~"], {
      normalLines: ["$ vim", "", "", "", ""],
      modes: { alternateScreen: true },
      cursor: { x: 2, y: 0, visible: true },
    });
    await write(t, paintSnapshot(snap));
    expect(t.buffer.active.type).toBe("alternate");
    expect(screen(t).slice(0, 3)).toEqual(["editor", "~", "~"]);
    await write(t, "\x1b[?1049l");
    expect(t.buffer.active.type).toBe("normal");
    expect(screen(t)[0]).toBe("$ vim");
  });
});
