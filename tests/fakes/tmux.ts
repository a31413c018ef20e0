import { statSync } from "node:fs";
import type {
  NewWindowOptions,
  PaneOutputEvent,
  PaneSnapshot,
  SplitWindowOptions,
  Tmux,
  TmuxEvent,
  TmuxHealthState,
  TmuxPane,
} from "../../src/tmux/tmux.ts";

/**
 * An in-memory tmux with the real one's semantics (tests/contract/tmux.contract.ts runs on
 * both). Several clients may share one FakeTmuxServer, as ag restarts share the real server.
 * Events are delivered asynchronously (a microtask), as the real client delivers them.
 */

export type FakeInput =
  | { kind: "keys"; keys: string[] }
  | { kind: "literal"; text: string }
  | { kind: "paste"; text: string }
  | { kind: "bytes"; bytes: Uint8Array };

export interface FakePane {
  paneId: string;
  windowId: string;
  pid: number | null;
  /** The pane's own tag (the window's, for its first pane). */
  tag: string;
  cwd: string;
  command: string[];
  env: Record<string, string>;
  width: number;
  height: number;
  dead: boolean;
  deadStatus: number | null;
  screen: string;
  inputs: FakeInput[];
}

/** A window as newWindow made it (tag, name, first program), its size now, and its live panes. */
export interface FakeWindow {
  windowId: string;
  tag: string;
  name: string;
  cwd: string;
  command: string[];
  env: Record<string, string>;
  width: number;
  height: number;
  /** In creation order; the first is the window's own until killPane removes it. */
  panes: FakePane[];
}

export interface FakeTmuxServer {
  windows: Map<string, FakeWindow>;
  clients: Set<(event: TmuxEvent) => void>;
  /** Each client's ear for pane output (a program wrote these bytes). */
  outputs: Set<(paneId: string, bytes: Uint8Array) => void>;
  nextId: number;
}

export interface FakeTmux extends Tmux {
  readonly server: FakeTmuxServer;
  /**
   * The pane's program drew `text` (the whole visible screen); signals pane-output. Watchers get
   * the bytes that draw it: home, clear, the text with CR LF line ends.
   */
  setScreen(paneId: string, text: string): void;
  /**
   * The pane's program wrote `data`: watchers get exactly these bytes, and the screen shows them
   * appended (the fake renders no escapes: a line feed starts a new line, the rest is text).
   */
  write(paneId: string, data: string | Uint8Array): void;
  /** What the pane shows now (what capturePane returns). */
  screen(paneId: string): string;
  /** The pane is there and its program runs. */
  hasPane(paneId: string): boolean;
  /** The pane's program exited; the pane stays, dead (remain-on-exit). */
  exit(paneId: string, status: number | null): void;
  /** The server died: every window is gone; clients see server-lost, then connected again. */
  killServer(): void;
  /** Everything sent to the pane, in order: literal and pasted texts, and each key name. */
  typed(paneId: string): string[];
  inputs(paneId: string): FakeInput[];
  window(windowId: string): FakeWindow | undefined;
}

export const FAKE_MAX_PASTE_BYTES = 256 * 1024;
// biome-ignore lint/suspicious/noControlCharactersInRegex: ESC starts the bracketed-paste markers
const BRACKET_MARKERS = /\x1b\[20[01]~/g;

export function createFakeTmuxServer(): FakeTmuxServer {
  return { windows: new Map(), clients: new Set(), outputs: new Set(), nextId: 1 };
}

export function createFakeTmux(options: { server?: FakeTmuxServer } = {}): FakeTmux {
  const server = options.server ?? createFakeTmuxServer();
  const listeners = new Set<(event: TmuxEvent) => void>();
  let health: TmuxHealthState = { healthy: false, error: "not started" };

  function deliver(event: TmuxEvent): void {
    queueMicrotask(() => {
      for (const listener of listeners) {
        try {
          listener(event);
        } catch {
          // Like the real client: a failing listener is not felt by tmux.
        }
      }
    });
  }

  function broadcast(event: TmuxEvent): void {
    for (const client of server.clients) client(event);
  }

  function connected(): void {
    health = { healthy: true, error: null };
    server.clients.add(onServerEvent);
    server.outputs.add(onOutput);
  }

  /** Each watched pane's listeners. */
  const watchers = new Map<string, Set<(event: PaneOutputEvent) => void>>();

  /**
   * Events reach listeners a microtask later, in the order they happened, as the real client
   * delivers them: a snapshot lands between the bytes written before it and those after.
   */
  function toWatchers(paneId: string, event: PaneOutputEvent): void {
    const listeners = watchers.get(paneId);
    if (!listeners) return;
    queueMicrotask(() => {
      for (const listener of listeners) {
        try {
          listener(event);
        } catch {
          // As the real client: a failing listener is not felt by tmux.
        }
      }
    });
  }

  function onOutput(paneId: string, bytes: Uint8Array): void {
    toWatchers(paneId, { type: "bytes", bytes });
  }

  function emitOutput(paneId: string, bytes: Uint8Array): void {
    for (const output of server.outputs) output(paneId, bytes);
    broadcast({ type: "pane-output", paneId });
  }

  function onServerEvent(event: TmuxEvent): void {
    if (event.type === "server-lost") {
      health = { healthy: false, error: `tmux server lost: ${event.error}` };
      server.clients.delete(onServerEvent);
      server.outputs.delete(onOutput);
      deliver(event);
      setTimeout(() => {
        if (health.error === "closed") return;
        connected();
        deliver({ type: "connected" });
      }, 0);
      return;
    }
    deliver(event);
  }

  function requireConnected(): void {
    if (!health.healthy) throw new Error(`tmux is not connected: ${health.error}`);
  }

  /** The pane, for a client command (which needs a connection). */
  function byPane(paneId: string): FakePane {
    requireConnected();
    return findPane(paneId);
  }

  /** The pane, for the test's hand on the world (its programs), connected or not. */
  function findPane(paneId: string): FakePane {
    for (const w of server.windows.values()) for (const p of w.panes) if (p.paneId === paneId) return p;
    throw new Error(`tmux: can't find pane: ${paneId}`);
  }

  function toPane(p: FakePane): TmuxPane {
    return {
      windowId: p.windowId,
      paneId: p.paneId,
      pid: p.pid,
      tag: p.tag,
      dead: p.dead,
      deadStatus: p.deadStatus,
    };
  }

  /** Same refusals as the real client. */
  function check(o: SplitWindowOptions): void {
    requireConnected();
    // biome-ignore lint/suspicious/noControlCharactersInRegex: same rule as the real client
    if (/[\x00-\x1f\x7f]/.test(o.tag)) throw new TypeError("a window tag cannot hold control characters");
    if (o.command.length === 0) throw new TypeError("a window needs a command");
    if (!statSync(o.cwd, { throwIfNoEntry: false })?.isDirectory())
      throw new Error(`no such directory: ${o.cwd}`);
  }

  function makePane(windowId: string, o: SplitWindowOptions): FakePane {
    const n = server.nextId++;
    return {
      paneId: `%${n}`,
      windowId,
      // Beyond any pid_max (at most 2^22): no real process ever has it.
      pid: 40_000_000 + n,
      tag: o.tag,
      cwd: o.cwd,
      command: [...o.command],
      env: { ...o.env },
      width: o.width ?? 120,
      height: o.height ?? 40,
      dead: false,
      deadStatus: null,
      screen: "",
      inputs: [],
    };
  }

  function create(o: NewWindowOptions): TmuxPane {
    check(o);
    // The window and its first pane share a number (@n, %n), as in a fresh real server.
    const windowId = `@${server.nextId}`;
    const pane = makePane(windowId, o);
    const { tag, name, cwd } = o;
    const [command, env, width, height] = [[...o.command], { ...o.env }, pane.width, pane.height];
    server.windows.set(windowId, { windowId, tag, name, cwd, command, env, width, height, panes: [pane] });
    return toPane(pane);
  }

  /** As the real client lays a split window out: one even column (row), each pane ≥ its size. */
  function split(windowId: string, o: SplitWindowOptions): TmuxPane {
    check(o);
    if (!/^@\d+$/.test(windowId)) throw new TypeError(`not a tmux window id: ${windowId}`);
    const w = server.windows.get(windowId);
    if (!w) throw new Error(`tmux: can't find window: ${windowId}`);
    const pane = makePane(windowId, o);
    w.panes.push(pane);
    const n = w.panes.length;
    if (o.horizontal) {
      w.width = Math.max(w.width, n * pane.width + n - 1);
      w.height = Math.max(w.height, pane.height);
    } else {
      w.width = Math.max(w.width, pane.width);
      w.height = Math.max(w.height, n * pane.height + n - 1);
    }
    for (const p of w.panes) {
      p.width = o.horizontal ? Math.floor((w.width - n + 1) / n) : w.width;
      p.height = o.horizontal ? w.height : Math.floor((w.height - n + 1) / n);
    }
    broadcast({ type: "window-layout", windowId });
    return toPane(pane);
  }

  function closeWindow(windowId: string): void {
    if (server.windows.delete(windowId)) broadcast({ type: "window-closed", windowId });
  }

  return {
    server,
    async start() {
      if (!health.healthy) {
        connected();
        deliver({ type: "connected" });
      }
    },
    async close() {
      server.clients.delete(onServerEvent);
      server.outputs.delete(onOutput);
      health = { healthy: false, error: "closed" };
    },
    health: () => ({ ...health }),
    on(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    async newWindow(o) {
      return create(o);
    },
    async splitWindow(windowId, o) {
      return split(windowId, o);
    },
    async listPanes() {
      requireConnected();
      return [...server.windows.values()].flatMap((w) => w.panes.map(toPane));
    },
    async capturePane(paneId) {
      return byPane(paneId).screen;
    },
    watchOutput(paneId, listener) {
      if (!/^%\d+$/.test(paneId)) throw new TypeError(`not a tmux pane id: ${paneId}`);
      const listeners = watchers.get(paneId) ?? new Set<(event: PaneOutputEvent) => void>();
      watchers.set(paneId, listeners);
      const own = (event: PaneOutputEvent) => listener(event);
      listeners.add(own);
      return () => {
        listeners.delete(own);
        if (listeners.size === 0 && watchers.get(paneId) === listeners) watchers.delete(paneId);
      };
    },
    outputListeners: () => [...watchers.values()].reduce((n, listeners) => n + listeners.size, 0),
    async snapshotPane(paneId) {
      const snapshot = snapshotOf(byPane(paneId));
      toWatchers(paneId, { type: "snapshot", snapshot });
      return snapshot;
    },
    async sendBytes(paneId, bytes) {
      const p = byPane(paneId);
      if (bytes.length) p.inputs.push({ kind: "bytes", bytes: new Uint8Array(bytes) });
    },
    async sendKeys(paneId, keys) {
      const p = byPane(paneId);
      if (keys.length) p.inputs.push({ kind: "keys", keys: [...keys] });
    },
    async sendLiteral(paneId, text) {
      const p = byPane(paneId);
      if (text) p.inputs.push({ kind: "literal", text });
    },
    async paste(paneId, text) {
      const p = byPane(paneId);
      const clean = text.replace(BRACKET_MARKERS, "");
      if (Buffer.byteLength(clean) > FAKE_MAX_PASTE_BYTES) {
        throw new RangeError(`paste exceeds ${FAKE_MAX_PASTE_BYTES} bytes`);
      }
      if (clean) p.inputs.push({ kind: "paste", text: clean });
    },
    async killWindow(windowId) {
      requireConnected();
      closeWindow(windowId);
    },
    async killPane(paneId) {
      requireConnected();
      if (!/^%\d+$/.test(paneId)) throw new TypeError(`not a tmux pane id: ${paneId}`);
      for (const w of server.windows.values()) {
        const index = w.panes.findIndex((p) => p.paneId === paneId);
        if (index === -1) continue;
        w.panes.splice(index, 1);
        // Like tmux: a window goes with its last pane.
        if (w.panes.length === 0) closeWindow(w.windowId);
        return;
      }
    },

    setScreen(paneId, text) {
      const p = findPane(paneId);
      p.screen = text;
      emitOutput(paneId, new TextEncoder().encode(`\x1b[H\x1b[2J${text.replaceAll("\n", "\r\n")}`));
    },
    write(paneId, data) {
      const p = findPane(paneId);
      const bytes = typeof data === "string" ? new TextEncoder().encode(data) : new Uint8Array(data);
      p.screen += new TextDecoder().decode(bytes).replaceAll("\r\n", "\n");
      emitOutput(paneId, bytes);
    },
    screen(paneId) {
      return findPane(paneId).screen;
    },
    hasPane(paneId) {
      for (const w of server.windows.values())
        for (const p of w.panes) if (p.paneId === paneId) return !p.dead;
      return false;
    },
    exit(paneId, status) {
      const p = findPane(paneId);
      if (p.dead) return;
      Object.assign(p, { dead: true, deadStatus: status, pid: null });
      broadcast({ type: "pane-died", paneId, status });
    },
    killServer() {
      server.windows.clear();
      broadcast({ type: "server-lost", error: "server exited" });
    },
    typed(paneId) {
      return findPane(paneId).inputs.flatMap((input) => {
        if (input.kind === "keys") return input.keys;
        return [input.kind === "bytes" ? new TextDecoder().decode(input.bytes) : input.text];
      });
    },
    inputs(paneId) {
      return findPane(paneId).inputs;
    },
    window(windowId) {
      return server.windows.get(windowId);
    },
  };
}

/**
 * The fake's screen as a snapshot: its last `height` lines as they are (no escapes rendered), the
 * cursor after the last character, and a terminal's default modes.
 */
function snapshotOf(p: FakePane): PaneSnapshot {
  const all = p.screen.split("\n");
  const lines = all.slice(-p.height);
  const cursorY = lines.length - 1;
  while (lines.length < p.height) lines.push("");
  return {
    width: p.width,
    height: p.height,
    cursor: { x: [...(lines[cursorY] ?? "")].length, y: cursorY, visible: true },
    lines,
    normalLines: null,
    modes: {
      alternateScreen: false,
      cursorKeys: false,
      keypad: false,
      insert: false,
      wrap: true,
      origin: false,
      scrollRegion: { top: 0, bottom: p.height - 1 },
      mouse: "off",
      mouseSgr: false,
      mouseUtf8: false,
    },
  };
}
