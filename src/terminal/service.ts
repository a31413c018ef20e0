import type { SessionService } from "../sessions/index.ts";
import { type Clock, systemClock } from "../shared/clock.ts";
import { CLOSE, type ServerMessage } from "./protocol.ts";
import {
  openViewer,
  RATE_WINDOW_MS,
  type TerminalConnection,
  type TerminalPeer,
  type TerminalTarget,
  type TerminalViewer,
  type ViewerDeps,
} from "./viewer.ts";

export interface TerminalService {
  /** The pane a session's terminal shows; SESSION_NOT_FOUND when it has none (ended). */
  locate(sessionId: string): TerminalTarget;
  /** A hibernated session's agent started again, for its terminal to show (docs/hibernation.md). */
  wake(sessionId: string): Promise<void>;
  /**
   * Starts a terminal for `viewer`, already authorized for the session. The session may have
   * ended since it was located: then the client is told so at once.
   */
  open(sessionId: string, viewer: TerminalViewer, peer: TerminalPeer): TerminalConnection;
}

const IDLE: TerminalConnection = { received() {}, drained() {}, closed() {} };

export function createTerminalService(
  deps: ViewerDeps & { sessions: Pick<SessionService, "placement" | "wake" | "hold"> },
): TerminalService {
  const locate = (sessionId: string): TerminalTarget => ({
    sessionId,
    ...deps.sessions.placement(sessionId),
  });
  // Every snapshot of a pane reaches all its viewers: asked for by many within one rate window,
  // it is taken once, so a flooding pane is repainted a few times a second however many watch.
  const viewerDeps: ViewerDeps = {
    ...deps,
    tmux: { ...deps.tmux, snapshotPane: throttlePerPane(deps.tmux.snapshotPane, deps.clock ?? systemClock) },
  };
  return {
    locate,
    async wake(sessionId) {
      await deps.sessions.wake(sessionId, "terminal");
    },
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
      // Watched, the session's agent stays up (never hibernated) until the viewer leaves.
      const release = deps.sessions.hold(sessionId);
      const connection = openViewer(viewerDeps, target, viewer, peer);
      return {
        received: (message) => connection.received(message),
        drained: () => connection.drained(),
        closed() {
          release();
          connection.closed();
        },
      };
    },
  };
}

/** The last snapshot times kept before old ones are swept. */
const PRUNE_ABOVE = 64;

/**
 * At most one snapshot of a pane per RATE_WINDOW_MS: a request within the window after one waits
 * for the window's end and shares the snapshot taken then with every request made meanwhile.
 */
export function throttlePerPane<T>(
  take: (paneId: string) => Promise<T>,
  clock: Clock,
): (paneId: string) => Promise<T> {
  const last = new Map<string, number>();
  const waiting = new Map<string, Promise<T>>();
  return (paneId) => {
    const queued = waiting.get(paneId);
    if (queued) return queued;
    const wait = (last.get(paneId) ?? Number.NEGATIVE_INFINITY) + RATE_WINDOW_MS - clock.now();
    const run = () => {
      waiting.delete(paneId);
      const now = clock.now();
      last.set(paneId, now);
      // A time older than the window throttles nothing: forget it (panes come and go for days).
      if (last.size > PRUNE_ABOVE)
        for (const [pane, at] of last) if (at + RATE_WINDOW_MS <= now) last.delete(pane);
      return take(paneId);
    };
    if (wait <= 0) return run();
    const later = new Promise<void>((resolve) => clock.setTimer(resolve, wait)).then(run);
    waiting.set(paneId, later);
    return later;
  };
}
