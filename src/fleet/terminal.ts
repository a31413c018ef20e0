import type { Principal } from "../auth/principal.ts";
import { AgError } from "../shared/errors.ts";
import { forwardToken } from "./credential.ts";
import type { HostRow } from "./store.ts";

/**
 * Another host's live terminal (`GET /v1/sessions/:id/terminal`, docs/terminal.md): the caller's
 * WebSocket is accepted here and relayed, frame for frame, to a WebSocket this host opens to the
 * owner with the fleet's credential (credential.ts). What the caller sends before the owner's side
 * is open waits; either side's close closes the other.
 */

/** The server side of the caller's socket, as the listener gives it (server/sockets.ts). */
export interface RelaySocket {
  sendText(text: string): unknown;
  sendBinary(bytes: Uint8Array): unknown;
  close(code?: number, reason?: string): void;
}

export interface RelayHandlers {
  open(socket: RelaySocket): void;
  message(socket: RelaySocket, message: string | Uint8Array): void;
  drain(socket: RelaySocket): void;
  close(socket: RelaySocket, code: number, reason: string): void;
}

/** The upgrade the listener offers a request, or null (server/sockets.ts socketOfferOf). */
export type SocketOffers = (request: Request) => { accept(handlers: RelayHandlers): boolean } | null;

/** A frame as the client WebSocket sends it (the listener's bytes are never shared memory). */
type Frame = string | Uint8Array<ArrayBuffer>;

/** WebSocket close codes a peer may not send itself (1005, 1006, 1015): said as 1011 instead. */
const RESERVED = new Set([1005, 1006, 1015]);
const closeCode = (code: number) => (RESERVED.has(code) ? 1011 : code);

export function relayTerminal(
  request: Request,
  offers: SocketOffers,
  from: string,
  host: HostRow,
  caller: Principal,
): Response {
  const offer = offers(request);
  const target = new URL(new URL(request.url).pathname, host.url);
  target.protocol = target.protocol === "https:" ? "wss:" : "ws:";
  const authorization = `Bearer ${forwardToken(host.secret, from, caller)}`;
  let owner: WebSocket | null = null;
  /** What the caller sent before the owner's side opened. */
  const waiting: Frame[] = [];
  const accepted = offer?.accept({
    open(socket) {
      owner = new WebSocket(target, { headers: { authorization } } as never);
      owner.binaryType = "arraybuffer";
      owner.addEventListener("open", () => {
        for (const message of waiting.splice(0)) owner?.send(message);
      });
      owner.addEventListener("message", (e) => {
        if (typeof e.data === "string") socket.sendText(e.data);
        else socket.sendBinary(new Uint8Array(e.data as ArrayBuffer));
      });
      owner.addEventListener("close", (e) => socket.close(closeCode(e.code), e.reason));
      owner.addEventListener("error", () => socket.close(1011, `host ${host.name} did not answer`));
    },
    message(_socket, message) {
      if (owner?.readyState === WebSocket.OPEN) owner.send(message as Frame);
      else waiting.push(message as Frame);
    },
    drain() {},
    close(_socket, code, reason) {
      owner?.close(closeCode(code), reason);
    },
  });
  if (!accepted)
    throw new AgError(
      "VALIDATION_ERROR",
      "this route is a WebSocket: send a WebSocket handshake (Upgrade: websocket)",
    );
  // The listener sends the 101 and drops this.
  return new Response(null, { status: 200 });
}
