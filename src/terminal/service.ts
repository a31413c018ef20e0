import type { SessionService } from "../sessions/index.ts";
import { CLOSE, type ServerMessage } from "./protocol.ts";
import {
  openViewer,
  type TerminalConnection,
  type TerminalPeer,
  type TerminalTarget,
  type TerminalViewer,
  type ViewerDeps,
} from "./viewer.ts";

export interface TerminalService {
  /** The pane a session's terminal shows; SESSION_NOT_FOUND when it has none (ended). */
  locate(sessionId: string): TerminalTarget;
  /**
   * Starts a terminal for `viewer`, already authorized for the session. The session may have
   * ended since it was located: then the client is told so at once.
   */
  open(sessionId: string, viewer: TerminalViewer, peer: TerminalPeer): TerminalConnection;
}

const IDLE: TerminalConnection = { received() {}, drained() {}, closed() {} };

export function createTerminalService(
  deps: ViewerDeps & { sessions: Pick<SessionService, "placement"> },
): TerminalService {
  const locate = (sessionId: string): TerminalTarget => ({
    sessionId,
    ...deps.sessions.placement(sessionId),
  });
  return {
    locate,
    open(sessionId, viewer, peer) {
      let target: TerminalTarget;
      try {
        target = locate(sessionId);
      } catch {
        const ended: ServerMessage = { type: "ended", reason: "session-ended" };
        peer.sendText(JSON.stringify(ended));
        peer.close(CLOSE.ENDED, ended.reason);
        return IDLE;
      }
      return openViewer(deps, target, viewer, peer);
    },
  };
}
