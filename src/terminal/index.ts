export { paintSnapshot } from "./paint.ts";
export {
  CLOSE,
  ClientMessage,
  type EndReason,
  MAX_BUFFERED_BYTES,
  MAX_INPUT_BYTES,
  type ServerMessage,
} from "./protocol.ts";
export { createTerminalService, type TerminalService } from "./service.ts";
export type {
  TerminalConnection,
  TerminalPeer,
  TerminalTarget,
  TerminalViewer,
  ViewerDeps,
} from "./viewer.ts";
export { MAX_BYTES_PER_WINDOW, RATE_WINDOW_MS } from "./viewer.ts";
