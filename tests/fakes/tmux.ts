import { statSync } from "node:fs";
import type { NewWindowOptions, Tmux, TmuxEvent, TmuxHealthState, TmuxPane } from "../../src/tmux/tmux.ts";

/**
 * An in-memory tmux with the real one's semantics (tests/contract/tmux.contract.ts runs on
 * both). Several clients may share one FakeTmuxServer, as ag restarts share the real server.
 * Events are delivered asynchronously (a microtask), as the real client delivers them.
 */

export type FakeInput =
  | { kind: "keys"; keys: string[] }
  | { kind: "literal"; text: string }
  | { kind: "paste"; text: string };

export interface FakeWindow {
  windowId: string;
  paneId: string;
  pid: number | null;
  tag: string;
  name: string;
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

export interface FakeTmuxServer {
  windows: Map<string, FakeWindow>;
  clients: Set<(event: TmuxEvent) => void>;
  nextId: number;
}

export interface FakeTmux extends Tmux {
  readonly server: FakeTmuxServer;
  /** The pane's program drew `text` (the whole visible screen); signals pane-output. */
  setScreen(paneId: string, text: string): void;
  /** What the pane shows now (what capturePane returns). */
  screen(paneId: string): string;
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
  return { windows: new Map(), clients: new Set(), nextId: 1 };
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
  }

  function onServerEvent(event: TmuxEvent): void {
    if (event.type === "server-lost") {
      health = { healthy: false, error: `tmux server lost: ${event.error}` };
      server.clients.delete(onServerEvent);
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
  function byPane(paneId: string): FakeWindow {
    requireConnected();
    return findPane(paneId);
  }

  /** The pane, for the test's hand on the world (its programs), connected or not. */
  function findPane(paneId: string): FakeWindow {
    for (const w of server.windows.values()) if (w.paneId === paneId) return w;
    throw new Error(`tmux: can't find pane: ${paneId}`);
  }

  function toPane(w: FakeWindow): TmuxPane {
    return {
      windowId: w.windowId,
      paneId: w.paneId,
      pid: w.pid,
      tag: w.tag,
      dead: w.dead,
      deadStatus: w.deadStatus,
    };
  }

  function create(o: NewWindowOptions): TmuxPane {
    requireConnected();
    // biome-ignore lint/suspicious/noControlCharactersInRegex: same rule as the real client
    if (/[\x00-\x1f\x7f]/.test(o.tag)) throw new TypeError("a window tag cannot hold control characters");
    if (o.command.length === 0) throw new TypeError("a window needs a command");
    if (!statSync(o.cwd, { throwIfNoEntry: false })?.isDirectory())
      throw new Error(`no such directory: ${o.cwd}`);
    const n = server.nextId++;
    const w: FakeWindow = {
      windowId: `@${n}`,
      paneId: `%${n}`,
      pid: 10_000 + n,
      tag: o.tag,
      name: o.name,
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
    server.windows.set(w.windowId, w);
    return toPane(w);
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
    async listPanes() {
      requireConnected();
      return [...server.windows.values()].map(toPane);
    },
    async capturePane(paneId) {
      return byPane(paneId).screen;
    },
    async sendKeys(paneId, keys) {
      const w = byPane(paneId);
      if (keys.length) w.inputs.push({ kind: "keys", keys: [...keys] });
    },
    async sendLiteral(paneId, text) {
      const w = byPane(paneId);
      if (text) w.inputs.push({ kind: "literal", text });
    },
    async paste(paneId, text) {
      const w = byPane(paneId);
      const clean = text.replace(BRACKET_MARKERS, "");
      if (Buffer.byteLength(clean) > FAKE_MAX_PASTE_BYTES) {
        throw new RangeError(`paste exceeds ${FAKE_MAX_PASTE_BYTES} bytes`);
      }
      if (clean) w.inputs.push({ kind: "paste", text: clean });
    },
    async killWindow(windowId) {
      requireConnected();
      if (!server.windows.delete(windowId)) return;
      broadcast({ type: "window-closed", windowId });
    },

    setScreen(paneId, text) {
      const w = findPane(paneId);
      w.screen = text;
      broadcast({ type: "pane-output", paneId });
    },
    screen(paneId) {
      return findPane(paneId).screen;
    },
    exit(paneId, status) {
      const w = findPane(paneId);
      if (w.dead) return;
      Object.assign(w, { dead: true, deadStatus: status, pid: null });
      broadcast({ type: "pane-died", paneId, status });
    },
    killServer() {
      server.windows.clear();
      broadcast({ type: "server-lost", error: "server exited" });
    },
    typed(paneId) {
      return findPane(paneId).inputs.flatMap((input) => (input.kind === "keys" ? input.keys : [input.text]));
    },
    inputs(paneId) {
      return findPane(paneId).inputs;
    },
    window(windowId) {
      return server.windows.get(windowId);
    },
  };
}
