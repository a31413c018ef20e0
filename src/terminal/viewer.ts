import { Value } from "@sinclair/typebox/value";
import type { AuditLog } from "../audit/index.ts";
import type { Principal } from "../auth/principal.ts";
import { grants } from "../auth/scopes.ts";
import type { AgEvent, EventBus } from "../events/bus.ts";
import { type Clock, systemClock } from "../shared/clock.ts";
import { describeError, type ErrorCode } from "../shared/errors.ts";
import type { Logger } from "../shared/log.ts";
import type { PaneOutputEvent, Tmux, TmuxEvent } from "../tmux/index.ts";
import { paintSnapshot } from "./paint.ts";
import {
  CLOSE,
  ClientMessage,
  type EndReason,
  MAX_BUFFERED_BYTES,
  MAX_INPUT_BYTES,
  type ServerMessage,
} from "./protocol.ts";

/** The client's end of a terminal, as the transport (a WebSocket) offers it. */
export interface TerminalPeer {
  sendText(text: string): void;
  sendBytes(bytes: Uint8Array): void;
  /** Bytes queued for the client and not yet sent. */
  buffered(): number;
  close(code: number, reason: string): void;
}

/** What the transport tells a terminal about its client. */
export interface TerminalConnection {
  received(message: string | Uint8Array): void;
  /** The client's queue has room again (after backpressure). */
  drained(): void;
  /** The client is gone: everything it held is let go. */
  closed(): void;
}

export interface TerminalTarget {
  sessionId: string;
  paneId: string;
  windowId: string;
}

/** Who looks: decided at the HTTP upgrade, before any byte about the session. */
export interface TerminalViewer {
  principal: Principal;
  ip: string | null;
}

export interface ViewerDeps {
  tmux: Pick<Tmux, "on" | "watchOutput" | "snapshotPane" | "sendBytes">;
  bus: Pick<EventBus, "subscribe">;
  audit: Pick<AuditLog, "append">;
  logger: Logger;
  /** The viewer's rights as they are now: a key revoked since the socket opened has none. */
  current(principal: Principal): Principal | null;
  maxBufferedBytes?: number;
  /** Bytes a client gets per RATE_WINDOW_MS before it is repainted instead (tests lower it). */
  maxBytesPerWindow?: number;
  clock?: Clock;
}

/**
 * A pane printing as fast as it can (a build's log, `yes`) would make every viewer's browser
 * parse megabytes a second that nobody can read. Past this budget a client's bytes are skipped
 * and it is repainted once the window is over: at most a few snapshots a second, the screen
 * always true. 64 KiB per 250 ms is more than any person reads, and far more than an agent's UI
 * redraws.
 */
export const RATE_WINDOW_MS = 250;
/** How often an open terminal checks that its viewer may still watch (a key revoked meanwhile). */
export const ACCESS_CHECK_MS = 10_000;
export const MAX_BYTES_PER_WINDOW = 64 * 1024;

const USAGE = 'send {"type":"control"}, then {"type":"input","data":"…"}';

/**
 * One client watching one pane: the snapshot, then the pane's bytes, until the pane or the session
 * ends. Typing needs `sessions:write` and an explicit control request (audited). A client too
 * slow for the output misses bytes and gets a fresh snapshot once it has caught up.
 */
export function openViewer(
  deps: ViewerDeps,
  target: TerminalTarget,
  viewer: TerminalViewer,
  peer: TerminalPeer,
): TerminalConnection {
  const maxBuffered = deps.maxBufferedBytes ?? MAX_BUFFERED_BYTES;
  const maxPerWindow = deps.maxBytesPerWindow ?? MAX_BYTES_PER_WINDOW;
  const clock = deps.clock ?? systemClock;
  let windowStart = 0;
  let windowBytes = 0;
  /** Cancels the repaint due at the end of a window whose budget was spent. */
  let windowTimer: (() => void) | null = null;
  const release: Array<() => void> = [];
  const encoder = new TextEncoder();
  let ended = false;
  /** A snapshot has been sent: bytes apply on top of it. */
  let painted = false;
  /** Output was skipped for a slow client: nothing more until the next snapshot. */
  let stale = false;
  let refreshing = false;
  let control = false;
  let refusalRecorded = false;

  const send = (message: ServerMessage) => peer.sendText(JSON.stringify(message));
  const fail = (code: ErrorCode, error: string) => send({ type: "error", code, error });

  function end(reason: EndReason): void {
    if (ended) return;
    send({ type: "ended", reason });
    letGo();
    peer.close(CLOSE.ENDED, reason);
  }

  function letGo(): void {
    ended = true;
    windowTimer?.();
    for (const off of release.splice(0)) off();
  }

  /** The snapshot reaches onOutput in its place among the bytes (as every watcher's does). */
  function refresh(): void {
    if (ended) return;
    refreshing = true;
    deps.tmux.snapshotPane(target.paneId).then(
      () => {
        refreshing = false;
        // Skipped for a queue still full: the drains may all have come meanwhile.
        catchUp();
      },
      (error) => {
        refreshing = false;
        deps.logger.debug(`terminal of ${target.sessionId}: no snapshot: ${describeError(error)}`);
        end("unavailable");
      },
    );
  }

  /** Counts bytes in the current window: true when these would go past its budget. */
  function overBudget(bytes: number): boolean {
    const now = clock.now();
    if (now - windowStart >= RATE_WINDOW_MS) {
      windowStart = now;
      windowBytes = 0;
    }
    windowBytes += bytes;
    return windowBytes > maxPerWindow;
  }

  /**
   * A client that fell behind is repainted once its queue is half empty, and (when it was too
   * fast) once its window is over.
   */
  function catchUp(): void {
    if (!stale || refreshing || ended || windowTimer !== null || peer.buffered() > maxBuffered / 2) return;
    refresh();
  }

  function onOutput(event: PaneOutputEvent): void {
    if (ended) return;
    if (peer.buffered() > maxBuffered) {
      stale = true;
      return;
    }
    if (event.type === "bytes") {
      if (!painted || stale) return;
      if (overBudget(event.bytes.length)) {
        stale = true;
        windowTimer ??= clock.setTimer(
          () => {
            windowTimer = null;
            catchUp();
          },
          windowStart + RATE_WINDOW_MS - clock.now(),
        );
        return;
      }
      peer.sendBytes(event.bytes);
      return;
    }
    checkAccess();
    if (ended) return;
    const { snapshot } = event;
    const { x, y } = snapshot.cursor;
    const data = paintSnapshot(snapshot);
    send({ type: "snapshot", cols: snapshot.width, rows: snapshot.height, cursor: { x, y }, data });
    painted = true;
    stale = false;
  }

  function onTmux(event: TmuxEvent): void {
    if (event.type === "window-closed" && event.windowId === target.windowId) end("closed");
    else if (event.type === "pane-died" && event.paneId === target.paneId) end("exited");
    else if (event.type === "server-lost") end("tmux-lost");
    // The pane may have a new size: a snapshot carries it.
    else if (event.type === "window-layout" && event.windowId === target.windowId) refresh();
  }

  function onEvent(event: AgEvent): void {
    if (event.event !== "session.ended" || event.session?.id !== target.sessionId) return;
    // A window closing ends its session on the way (tmux's listeners run in turn): the pane's
    // own reason, given in the same turn, is the more precise one.
    queueMicrotask(() => end("session-ended"));
  }

  /** Still allowed to watch (its key not revoked meanwhile)? If not, the terminal ends. */
  function checkAccess(): void {
    if (deps.current(viewer.principal) === null) end("revoked");
  }

  /** Holds the scope now (not only when the socket opened)? */
  function mayType(): { ok: true } | { ok: false; reason: string } {
    const now = deps.current(viewer.principal);
    if (now === null)
      return { ok: false, reason: "the credential this terminal was opened with is no longer valid" };
    if (!grants(now.scopes, "sessions:write"))
      return { ok: false, reason: `${now.actor} lacks the scope sessions:write` };
    // Keys typed into a terminal answer its dialogs: an agent's own key watches, a person types.
    if (now.sessionId !== null)
      return { ok: false, reason: "a session's own key watches a terminal; it does not type into one" };
    return { ok: true };
  }

  function record(outcome: "success" | "denied"): void {
    const { actor, tenantId } = viewer.principal;
    try {
      deps.audit.append({
        actor,
        tenantId,
        ip: viewer.ip,
        action: "session.terminal_control",
        target: target.sessionId,
        outcome,
      });
    } catch (error) {
      deps.logger.error(`audit record of terminal control of ${target.sessionId} failed`, error);
    }
  }

  /** Each grant is audited (again after a release); a refusal is recorded once per terminal. */
  function takeControl(): void {
    const may = control ? ({ ok: true } as const) : mayType();
    if (may.ok && !control) record("success");
    else if (!may.ok && !refusalRecorded) record("denied");
    refusalRecorded ||= !may.ok;
    control = may.ok;
    send(
      may.ok ? { type: "control", granted: true } : { type: "control", granted: false, reason: may.reason },
    );
  }

  function input(data: string): void {
    if (!control) {
      fail("FORBIDDEN", `input before control is ignored: ${USAGE}`);
      return;
    }
    const may = mayType();
    if (!may.ok) {
      control = false;
      send({ type: "control", granted: false, reason: may.reason });
      return;
    }
    const bytes = encoder.encode(data);
    if (bytes.length > MAX_INPUT_BYTES) {
      fail("PAYLOAD_TOO_LARGE", `input is ${bytes.length} bytes; at most ${MAX_INPUT_BYTES} per message`);
      return;
    }
    deps.tmux.sendBytes(target.paneId, bytes).catch((error) => {
      deps.logger.debug(`terminal of ${target.sessionId}: input not typed: ${describeError(error)}`);
      if (!ended) fail("TMUX_UNAVAILABLE", "the input could not be typed into the pane");
    });
  }

  /** A client message: JSON text, one of ClientMessage; anything else is answered, never fatal. */
  function receive(message: string | Uint8Array): void {
    if (typeof message !== "string") {
      fail("VALIDATION_ERROR", `binary messages are not read: ${USAGE}`);
      return;
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(message);
    } catch {
      fail("VALIDATION_ERROR", `not JSON: ${USAGE}`);
      return;
    }
    if (!Value.Check(ClientMessage, parsed)) fail("VALIDATION_ERROR", `unknown message: ${USAGE}`);
    else if (parsed.type === "control") takeControl();
    else if (parsed.type === "release") {
      // Back to watching; taking control again is granted (and audited) again.
      control = false;
      send({ type: "control", granted: false, released: true });
    } else input(parsed.data);
  }

  let cancelAccessCheck = () => {};
  const scheduleAccessCheck = () => {
    cancelAccessCheck = clock.setTimer(() => {
      checkAccess();
      if (!ended) scheduleAccessCheck();
    }, ACCESS_CHECK_MS);
  };
  scheduleAccessCheck();
  release.push(
    () => cancelAccessCheck(),
    deps.tmux.on(onTmux),
    deps.bus.subscribe(onEvent),
    deps.tmux.watchOutput(target.paneId, onOutput),
  );
  refresh();

  return {
    received(message) {
      if (!ended) receive(message);
    },
    drained: catchUp,
    closed: letGo,
  };
}
