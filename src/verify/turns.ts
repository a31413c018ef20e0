import type { AgEvent } from "../events/bus.ts";

/**
 * Tells, from the event stream, when an agent's turn has ended (autoVerifyOnStop).
 *
 * A turn ends when a session goes idle after working (`session.idle`). But a new session also
 * starts out "working" until its UI is up, and its first idle screen publishes the same
 * `session.idle`: that one ends the boot, not a turn, and nothing was changed to verify. So a
 * session is "booting" from `session.created` until the first sign of a turn (`session.working`,
 * or its first prompt as `message.user`) or its first idle. Sessions adopted after a restart
 * publish no `session.created`: their next idle is a turn end.
 */
export function createTurnEndDetector(): (event: AgEvent) => string | null {
  const booting = new Set<string>();
  return (event) => {
    const id = event.session?.id;
    if (!id) return null;
    switch (event.event) {
      case "session.created":
        booting.add(id);
        return null;
      case "session.working":
      case "message.user":
      case "session.ended":
        booting.delete(id);
        return null;
      case "session.idle":
        return booting.delete(id) ? null : id;
      default:
        return null;
    }
  };
}
