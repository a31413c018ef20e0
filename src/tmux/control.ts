import { declaredEnvironment } from "../shared/environment.ts";
import { isPaneId } from "./argv.ts";
import { createOutputCoalescer } from "./coalesce.ts";
import {
  captureCommand,
  DEAD_SUBSCRIPTION,
  findPlaceholder,
  pasteCommands,
  pasteText,
  placeholderWindowCommand,
  SERVER_SETUP,
  staleNames,
  startupCommand,
  WINDOW_LIST_FORMAT,
} from "./commands.ts";
import { type ControlConnection, openControlConnection } from "./connection.ts";
import { createDeathTracker } from "./deaths.ts";
import { parseNotification } from "./framing.ts";
import { createPaneOutput } from "./output.ts";
import type { Tmux, TmuxEvent, TmuxHealthState } from "./tmux.ts";
import { createWindowCommands } from "./windows.ts";

export interface ControlTmuxLogger {
  debug(...args: unknown[]): void;
  warn(...args: unknown[]): void;
  error(...args: unknown[]): void;
}

export interface ControlTmuxOptions {
  socket: string;
  /** The tmux session holding ag's windows. */
  session: string;
  binary?: string;
  /** Read only when ag starts the server; default none (never the user's ~/.tmux.conf). */
  configFile?: string;
  logger?: ControlTmuxLogger;
  /** pane-output is signalled at most once per pane per this interval (trailing edge kept). */
  outputIntervalMs?: number;
  commandTimeoutMs?: number;
  /**
   * The environment of ag's children (shared/environment.ts `declaredEnvironment`). At each
   * connect the server's global and session environments are pruned to its names: a server
   * started by an earlier ag keeps that ag's environment, and a window gets the global one under
   * what its launch passes with `-e`.
   */
  env?: Record<string, string>;
}

/**
 * ag's tmux layer over one long-lived control-mode client on the private socket. Events:
 * `%output` → pane-output (coalesced), and the decoded bytes to the pane's watchers, if any;
 * `%layout-change` → window-layout; `%window-close` → window-closed; pane death from a
 * `refresh-client -B` subscription (tmux pushes changes, ≤ 1 s); the client process ending
 * (`%exit`, server killed) → server-lost, then reconnects with back-off (starting a new server
 * if needed) → connected. close() only detaches: windows and server outlive ag.
 */
export function createControlTmux(options: ControlTmuxOptions): Tmux {
  const binary = options.binary ?? "tmux";
  const session = options.session;
  if (!/^[A-Za-z0-9_-]+$/.test(session)) throw new TypeError(`invalid tmux session name: ${session}`);
  const target = `=${session}`;
  const env = options.env ?? declaredEnvironment();
  const log = options.logger;
  const listeners = new Set<(event: TmuxEvent) => void>();
  const coalescer = createOutputCoalescer(options.outputIntervalMs ?? 30, (paneId) =>
    emit({ type: "pane-output", paneId }),
  );
  const deaths = createDeathTracker({
    run: (args) => run(args),
    isConnected: () => connection !== null,
    died: (paneId, status) => emit({ type: "pane-died", paneId, status }),
  });
  /** Which window each known pane is in, to drop its pending signals when the window closes. */
  const paneWindows = new Map<string, string>();
  let connection: ControlConnection | null = null;
  let health: TmuxHealthState = { healthy: false, error: "not started" };
  let started = false;
  let firstConnect: Promise<void> = Promise.resolve();
  let closing = false;
  let reconnectTimer: ReturnType<typeof setTimeout> | null = null;
  let backoffMs = 100;
  const output = createPaneOutput({
    run: (args) => run(args),
    runTogether: (commands) => {
      if (!connection) {
        const error = new Error(`tmux is not connected: ${health.error}`);
        return commands.map(() => Promise.reject(error));
      }
      log?.debug(`tmux commands: ${commands.map((args) => args[0]).join(", ")}`);
      return connection.runTogether(commands);
    },
    changed: (paneId) => coalescer.touch(paneId),
    logError: (message, error) => log?.error(message, error),
  });
  const windows = createWindowCommands({
    run: (args) => run(args),
    target,
    track: (paneId, windowId) => paneWindows.set(paneId, windowId),
    untrack: (paneId) => {
      coalescer.forget(paneId);
      deaths.forget(paneId);
      paneWindows.delete(paneId);
    },
  });

  function emit(event: TmuxEvent): void {
    for (const listener of listeners) {
      try {
        listener(event);
      } catch (error) {
        log?.error("tmux event listener failed", error);
      }
    }
  }

  function onOutput(paneId: string, escaped: Uint8Array): void {
    coalescer.touch(paneId);
    output.deliver(paneId, escaped);
  }

  function onNotification(line: string): void {
    const note = parseNotification(line);
    if (note.kind === "layout-change") emit({ type: "window-layout", windowId: note.windowId });
    else if (note.kind === "window-close") {
      for (const [paneId, windowId] of paneWindows) {
        if (windowId !== note.windowId) continue;
        coalescer.forget(paneId);
        deaths.forget(paneId);
        paneWindows.delete(paneId);
      }
      emit({ type: "window-closed", windowId: note.windowId });
    } else if (note.kind === "subscription" && note.name === DEAD_SUBSCRIPTION) {
      paneWindows.set(note.paneId, note.windowId);
      deaths.observe(note.paneId, note.value);
    }
  }

  async function connect(): Promise<void> {
    // Notifications arrive before the connection is adopted (and after it is dropped): ignored.
    let conn: ControlConnection | null = null;
    conn = await openControlConnection({
      binary,
      socket: options.socket,
      configFile: options.configFile ?? null,
      env,
      startup: startupCommand(session),
      commandTimeoutMs: options.commandTimeoutMs,
      onNotification: (line) => {
        if (connection === conn) onNotification(line);
      },
      onOutput: (paneId, escaped) => {
        if (connection === conn) onOutput(paneId, escaped);
      },
      onClose: (reason) => {
        if (connection === conn) lost(reason);
      },
    });
    if (closing) {
      await conn.close();
      throw new Error("tmux client closed while connecting");
    }
    deaths.clear();
    paneWindows.clear();
    connection = conn;
    try {
      await Promise.all(SERVER_SETUP.map((args) => conn.run(args)));
      await pruneEnvironment(conn);
      await ensurePlaceholder(conn);
    } catch (error) {
      connection = null;
      await conn.close();
      throw error;
    }
    health = { healthy: true, error: null };
    backoffMs = 100;
    emit({ type: "connected" });
  }

  /**
   * Unsets every variable of the server's global and session environments that ag's declared
   * environment lacks: what an earlier ag (or a person attaching) left there would otherwise reach
   * every new window. Only names travel (on the control client's stdin); the values a window gets
   * are passed with its launch.
   */
  async function pruneEnvironment(conn: ControlConnection): Promise<void> {
    const prune = async (scope: string[]) => {
      const names = staleNames(await conn.run(["show-environment", ...scope]), env);
      await Promise.all(names.map((name) => conn.run(["set-environment", ...scope, "-u", name])));
    };
    await prune(["-g"]);
    await prune(["-t", target]);
  }

  async function ensurePlaceholder(conn: ControlConnection): Promise<void> {
    const found = findPlaceholder(await conn.run(["list-windows", "-t", target, "-F", WINDOW_LIST_FORMAT]));
    if (found?.marked) return;
    // A session this client just created has an unmarked idle window; otherwise make one.
    const windowId = found?.windowId ?? (await conn.run(placeholderWindowCommand(target)))[0];
    if (windowId) await conn.run(["set-option", "-w", "-t", windowId, "@ag_placeholder", "1"]);
  }

  function lost(reason: string): void {
    connection = null;
    coalescer.clear();
    health = { healthy: false, error: `tmux server lost: ${reason}` };
    log?.warn(`tmux control client lost: ${reason}`);
    emit({ type: "server-lost", error: reason });
    scheduleReconnect();
  }

  function scheduleReconnect(): void {
    if (closing || reconnectTimer) return;
    const delay = backoffMs;
    backoffMs = Math.min(backoffMs * 2, 5000);
    reconnectTimer = setTimeout(async () => {
      reconnectTimer = null;
      if (closing || connection) return;
      try {
        await connect();
        log?.debug("tmux control client reconnected");
      } catch (error) {
        health = { healthy: false, error: String((error as Error).message ?? error) };
        log?.debug(`tmux reconnect failed, retrying in ${backoffMs} ms: ${health.error}`);
        scheduleReconnect();
      }
    }, delay);
  }

  function run(args: string[]): Promise<string[]> {
    if (!connection) return Promise.reject(new Error(`tmux is not connected: ${health.error}`));
    // One line per command at debug level: how bench/idle-sessions.ts counts tmux traffic.
    log?.debug(`tmux command: ${args[0]}`);
    return connection.run(args);
  }

  function paneTarget(paneId: string): string {
    if (!isPaneId(paneId)) throw new TypeError(`not a tmux pane id: ${paneId}`);
    return paneId;
  }

  return {
    async start() {
      if (!started) {
        started = true;
        closing = false;
        firstConnect = connect().catch((error) => {
          if (closing) throw error;
          health = { healthy: false, error: String((error as Error).message ?? error) };
          // Keep trying in the background: tmux may appear later; `connected` will say so.
          scheduleReconnect();
          throw error;
        });
      }
      if (connection && health.healthy) return;
      await firstConnect;
    },

    async close() {
      closing = true;
      started = false;
      if (reconnectTimer) clearTimeout(reconnectTimer);
      reconnectTimer = null;
      coalescer.clear();
      const conn = connection;
      connection = null;
      health = { healthy: false, error: "closed" };
      await conn?.close();
    },

    health: () => ({ ...health }),

    on(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },

    ...windows,

    watchOutput: output.watchOutput,
    outputListeners: output.outputListeners,
    snapshotPane: output.snapshotPane,
    sendBytes: output.sendBytes,

    async capturePane(paneId, o = {}) {
      // In control mode the reply's lines are the captured lines; `capture-pane -p` ends each with \n.
      const lines = await run(captureCommand(paneTarget(paneId), o));
      return lines.map((line) => `${line}\n`).join("");
    },

    async sendKeys(paneId, keys) {
      if (keys.length === 0) return;
      await run(["send-keys", "-t", paneTarget(paneId), "--", ...keys]);
    },

    async sendLiteral(paneId, text) {
      if (text === "") return;
      await run(["send-keys", "-t", paneTarget(paneId), "-l", "--", text]);
    },

    async paste(paneId, text) {
      const pane = paneTarget(paneId);
      const clean = pasteText(text);
      if (clean === "") return;
      const { buffer, set, paste } = pasteCommands(pane, clean);
      // Pipelined: tmux runs them in order; paste-buffer -d deletes the buffer once pasted.
      const results = await Promise.allSettled([run(set), run(paste)]);
      const failed = results.find((r) => r.status === "rejected");
      if (failed) {
        await run(["delete-buffer", "-b", buffer]).catch(() => {});
        throw failed.reason;
      }
    },
  };
}
