import type { ServerWebSocket, WebSocketHandler } from "bun";

/**
 * WebSockets, kept out of the routes' way. The listener offers each request an upgrade (bound to
 * the request, as its principal is); a route that speaks WebSocket does its HTTP checks first —
 * authentication, scope, tenant and existence are all decided before the upgrade, each with its
 * ordinary error envelope — then accepts the offer with the handlers of its socket.
 */
export interface SocketHandlers {
  open(socket: ServerSocket): void;
  message(socket: ServerSocket, message: string | Uint8Array): void;
  /** The socket's send queue has room again (after backpressure). */
  drain(socket: ServerSocket): void;
  close(socket: ServerSocket, code: number, reason: string): void;
}

export type ServerSocket = ServerWebSocket<SocketHandlers>;

export interface SocketOffer {
  /** The peer's address, for audit records. */
  ip: string | null;
  /** Upgrades the request; false when it is no valid WebSocket handshake. */
  accept(handlers: SocketHandlers): boolean;
}

/** A client message larger than this closes the socket (1009): a backstop, routes bound less. */
export const MAX_SOCKET_MESSAGE_BYTES = 1024 * 1024;
/** Close code for every socket when the server stops. */
export const GOING_AWAY = 1001;

const offers = new WeakMap<Request, SocketOffer>();

export function bindSocketOffer(request: Request, offer: SocketOffer): void {
  offers.set(request, offer);
}

/** The upgrade the listener offers for this request; null when it offers none (app.handle in tests). */
export function socketOfferOf(request: Request): SocketOffer | null {
  return offers.get(request) ?? null;
}

export function isWebSocketRequest(request: Request): boolean {
  return request.method === "GET" && request.headers.get("upgrade")?.toLowerCase() === "websocket";
}

/**
 * Bun's handlers for every socket: each is passed to the handlers its route gave. One that throws
 * closes its own socket (1011), never the server.
 */
export function socketDispatch(sockets: Set<ServerSocket>): WebSocketHandler<SocketHandlers> {
  const guarded =
    <A extends unknown[]>(run: (socket: ServerSocket, ...args: A) => void) =>
    (socket: ServerSocket, ...args: A) => {
      try {
        run(socket, ...args);
      } catch {
        socket.close(1011, "internal error");
      }
    };
  return {
    maxPayloadLength: MAX_SOCKET_MESSAGE_BYTES,
    open: guarded((socket) => {
      sockets.add(socket);
      socket.data.open(socket);
    }),
    message: guarded((socket, message: string | Uint8Array) => socket.data.message(socket, message)),
    drain: guarded((socket) => socket.data.drain(socket)),
    close(socket, code, reason) {
      sockets.delete(socket);
      try {
        socket.data.close(socket, code, reason);
      } catch {
        // The socket is gone already.
      }
    },
  };
}
