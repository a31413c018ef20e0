export { paintSnapshot } from "./paint.ts";
export {
  CLOSE,
  ClientMessage,
  type EndReason,
  MAX_BUFFERED_BYTES,
  MAX_INPUT_BYTES,
  type ServerMessage,
} from "./protocol.ts";
export { createTerminalService, type TerminalService, throttlePerPane } from "./service.ts";
export type {
  TerminalConnection,
  TerminalPeer,
  TerminalTarget,
  TerminalViewer,
  ViewerDeps,
} from "./viewer.ts";
export { ACCESS_CHECK_MS, MAX_BYTES_PER_WINDOW, RATE_WINDOW_MS } from "./viewer.ts";
