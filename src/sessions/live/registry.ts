import { AgError } from "../../shared/errors.ts";
import type { SessionRecord } from "../repo.ts";
import { isTerminal } from "../session.ts";
import { createLiveSession, type FollowMode, type LiveDeps, type LiveSession } from "./session.ts";

/**
 * The sessions ag follows now (running in a window), by id, pane and window: what the hooks,
 * the tmux supervisor and the session service look up.
 */
export interface LiveSessions {
  get(id: string): LiveSession | undefined;
  /** The live session of a running agent, or SESSION_NOT_FOUND (an ended one is gone for actions). */
  running(id: string): LiveSession;
  byPane(paneId: string): LiveSession | undefined;
  /** A window holds a session and, after a spawn, its teammates. */
  inWindow(windowId: string): LiveSession[];
  all(): LiveSession[];
  /** Starts following a stored session (once; a second call returns the same one). */
  follow(record: SessionRecord, mode: FollowMode): LiveSession;
  /** Stops following it: its timers, transcript watch and screen reads end. */
  forget(id: string): void;
}

export function createLiveSessions(deps: LiveDeps): LiveSessions {
  const live = new Map<string, LiveSession>();
  const registry: LiveSessions = {
    get: (id) => live.get(id),
    running(id) {
      const session = live.get(id);
      if (!session || isTerminal(session.status().status))
        throw new AgError("SESSION_NOT_FOUND", `no running session ${id}`);
      return session;
    },
    byPane: (paneId) => [...live.values()].find((s) => s.record().paneId === paneId),
    inWindow: (windowId) => [...live.values()].filter((s) => s.record().windowId === windowId),
    all: () => [...live.values()],
    follow(record, mode) {
      const existing = live.get(record.id);
      if (existing) return existing;
      const session = createLiveSession(
        record,
        {
          ...deps,
          // An ended session is no longer followed (reading its transcript does not need it).
          onEnded: (id) => queueMicrotask(() => live.get(id) === session && registry.forget(id)),
        },
        mode,
      );
      live.set(record.id, session);
      return session;
    },
    forget(id) {
      live.get(id)?.dispose();
      live.delete(id);
    },
  };
  return registry;
}
