export { paintSnapshot } from "./paint.ts";
export { CLOSE, MAX_INPUT_BYTES } from "./protocol.ts";
export { createTerminalService, type TerminalService, throttlePerPane } from "./service.ts";
export type {
  TerminalConnection,
  TerminalPeer,
  TerminalTarget,
  TerminalViewer,
  ViewerDeps,
} from "./viewer.ts";
export { ACCESS_CHECK_MS, MAX_BYTES_PER_WINDOW, RATE_WINDOW_MS } from "./viewer.ts";
