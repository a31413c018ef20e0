import { Elysia } from "elysia";
import { principalOf } from "../../auth/principal.ts";
import { AgError } from "../../shared/errors.ts";
import type { TerminalConnection, TerminalService, TerminalViewer } from "../../terminal/index.ts";
import { BEARER_OR_TOKEN } from "../openapi.ts";
import { isWebSocketRequest, type SocketHandlers, socketOfferOf } from "../sockets.ts";
import { IdParams } from "./params.ts";

/**
 * `GET /v1/sessions/:id/terminal`, a WebSocket (docs/terminal.md). Everything an HTTP answer can
 * say is said before the upgrade, as for any route: 401 (the guard, before routing, the same for
 * any id), 403 scope, 404 for a session that is not there or not the caller's tenant's or has
 * ended, 400 for a request that is no WebSocket handshake. Only then is the socket opened.
 */
export function terminalRoutes(terminals: TerminalService) {
  return new Elysia({ name: "routes/terminal" }).get(
    "/v1/sessions/:id/terminal",
    async ({ params, request }) => {
      const offer = socketOfferOf(request);
      const handshake = offer !== null && isWebSocketRequest(request);
      // A hibernated session's agent is started again for a terminal to show (a handshake only).
      if (handshake) await terminals.wake(params.id);
      terminals.locate(params.id);
      if (!offer || !handshake) {
        throw new AgError(
          "VALIDATION_ERROR",
          "this route is a WebSocket: send a WebSocket handshake (Upgrade: websocket)",
        );
      }
      const viewer: TerminalViewer = { principal: principalOf(request), ip: offer.ip };
      if (!offer.accept(terminalSocket(terminals, params.id, viewer))) {
        throw new AgError("VALIDATION_ERROR", "not a valid WebSocket handshake");
      }
      // The listener sends the 101 and drops this.
      return new Response(null, { status: 200 });
    },
    {
      params: IdParams,
      detail: {
        summary:
          "The session's live terminal, a WebSocket: a snapshot, then raw output; keystrokes with sessions:write",
        description:
          "Authenticate with `Authorization: Bearer` or `?token=` (a single-use token from POST /v1/auth/sse-token). " +
          'Server → client: text `{type:"snapshot", cols, rows, cursor, data}`, then binary frames of output, ' +
          '`{type:"ended", reason}` at the end. Client → server: `{type:"control"}`, then `{type:"input", data}`. ' +
          "See docs/terminal.md.",
        tags: ["sessions"],
        responses: { 101: { description: "Switching Protocols: the terminal's WebSocket" } },
        security: BEARER_OR_TOKEN,
      },
    },
  );
}

/** The socket's side of a terminal: Bun's WebSocket as the terminal's peer. */
function terminalSocket(
  terminals: TerminalService,
  sessionId: string,
  viewer: TerminalViewer,
): SocketHandlers {
  let connection: TerminalConnection | null = null;
  return {
    open(socket) {
      connection = terminals.open(sessionId, viewer, {
        sendText: (text) => void socket.sendText(text),
        sendBytes: (bytes) => void socket.sendBinary(bytes),
        buffered: () => socket.getBufferedAmount(),
        close: (code, reason) => socket.close(code, reason),
      });
    },
    message: (_socket, message) => connection?.received(message),
    drain: () => connection?.drained(),
    close() {
      connection?.closed();
      connection = null;
    },
  };
}
