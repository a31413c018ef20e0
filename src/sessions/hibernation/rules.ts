import type { PendingPermission, SessionStatus } from "../session.ts";

/**
 * When an idle session may have its agent ended (docs/hibernation.md), decided from what is known
 * of it now. Pure: the hibernation service asks it whenever the session's state changes and again
 * when its timer fires.
 */

/** What keeps a session's agent up. */
export type Awake = "off" | "pinned" | "not-idle" | "pending" | "watched" | "cannot-resume" | "not-followed";

export interface HibernationView {
  /** Its state, as its live session holds it (undefined: ag does not follow it). */
  status: SessionStatus | undefined;
  pending: PendingPermission | null;
  /** Its own setting: null, the server's; 0, never (`hibernate: false`); else ms. */
  ownAfterMs: number | null;
  /** The server's hibernateAfterMs; 0 turns hibernation off. */
  serverAfterMs: number;
  /** Open live terminals on it (the console's, `ag attach` through the API). */
  viewers: number;
  /** Its agent can continue its conversation in a later launch, on its driver. */
  resumable: boolean;
}

/** How long idle before it hibernates; null: never. */
export function afterMsOf(view: Pick<HibernationView, "ownAfterMs" | "serverAfterMs">): number | null {
  if (view.ownAfterMs !== null) return view.ownAfterMs > 0 ? view.ownAfterMs : null;
  return view.serverAfterMs > 0 ? view.serverAfterMs : null;
}

/** Why the session's agent stays up now, or null when it may be ended once idle long enough. */
export function keptAwake(view: HibernationView): Awake | null {
  if (view.status === undefined) return "not-followed";
  if (view.ownAfterMs === 0) return "pinned";
  if (afterMsOf(view) === null) return "off";
  if (view.pending) return "pending";
  if (view.status !== "idle") return "not-idle";
  if (view.viewers > 0) return "watched";
  if (!view.resumable) return "cannot-resume";
  return null;
}

/** When it hibernates (epoch ms), given when it was last active; null: it stays up. */
export function hibernatesAt(view: HibernationView, lastActivityAt: number): number | null {
  if (keptAwake(view) !== null) return null;
  const afterMs = afterMsOf(view);
  return afterMs === null ? null : lastActivityAt + afterMs;
}
