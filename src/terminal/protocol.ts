import { type Static, Type } from "@sinclair/typebox";
import type { ErrorCode } from "../shared/errors.ts";

/**
 * The live terminal's WebSocket messages (docs/terminal.md). Server → client: text frames hold
 * JSON (ServerMessage), binary frames the pane's raw output. Client → server: text frames of
 * JSON (ClientMessage); unknown fields are ignored, so clients may send more than this version reads.
 */

/** One `input` message carries at most this many bytes (UTF-8); a larger paste is split by the client. */
export const MAX_INPUT_BYTES = 64 * 1024;
/** Frames the server lets queue for a slow client before it skips output and repaints later. */
export const MAX_BUFFERED_BYTES = 1024 * 1024;

export const ClientMessage = Type.Union([
  Type.Object({ type: Type.Literal("control") }, { description: "ask to type into the pane" }),
  Type.Object({ type: Type.Literal("release") }, { description: "stop typing: back to watching" }),
  Type.Object(
    { type: Type.Literal("input"), data: Type.String({ description: "as xterm's onData gives it" }) },
    { description: "keystrokes, typed into the pane as these exact bytes (UTF-8)" },
  ),
]);
export type ClientMessage = Static<typeof ClientMessage>;

/** Why a terminal ended: `{type: "ended", reason}` is its last message. */
export type EndReason =
  /** The program in the pane exited (the pane stays, dead, on ag's side). */
  | "exited"
  /** The pane's window is gone (killed, or closed by tmux). */
  | "closed"
  /** The session ended (killed, completed, crashed). */
  | "session-ended"
  /** ag lost its tmux server. */
  | "tmux-lost"
  /** The pane could not be read (it went away as the terminal opened). */
  | "unavailable"
  /** The credential the terminal was opened with was revoked meanwhile. */
  | "revoked";

export type ServerMessage =
  /**
   * The screen now: resize the terminal to cols x rows, write `data` (it resets, clears, paints
   * and places the cursor), then apply the binary frames that follow. May come again at any time
   * (a resize, a slow client catching up, another viewer's snapshot): repaint from it each time.
   */
  | { type: "snapshot"; cols: number; rows: number; cursor: { x: number; y: number }; data: string }
  | { type: "control"; granted: boolean; reason?: string; released?: boolean }
  | { type: "ended"; reason: EndReason }
  | { type: "error"; code: ErrorCode; error: string };

/** WebSocket close codes the server uses. */
export const CLOSE = {
  /** After `{type: "ended"}`. */
  ENDED: 1000,
  /** ag is shutting down. */
  GOING_AWAY: 1001,
  /** A client message over the frame limit (Bun closes the connection itself). */
  TOO_BIG: 1009,
  /** Something broke on the server's side. */
  INTERNAL: 1011,
} as const;
