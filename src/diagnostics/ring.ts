import { type Static, Type } from "@sinclair/typebox";
import { type AgEvent, isStatusEvent } from "../events/bus.ts";

/** CONTRACT §8: a ring of 500; `limit` 1–500, default 50 (SPEC). */
export const DIAGNOSTICS_SIZE = 500;

export const DiagnosticsEvent = Type.Object({
  type: Type.String({
    description:
      "tmux.lost, tmux.reconnected, tmux.failure, delivery.retry, delivery.failed, hook.rejected, state.change, channel.failure",
  }),
  timestamp: Type.String({ format: "date-time" }),
  detail: Type.String(),
});
export type DiagnosticsEvent = Static<typeof DiagnosticsEvent>;

export const DiagnosticsResponse = Type.Object({
  count: Type.Integer(),
  events: Type.Array(DiagnosticsEvent, { description: "newest first" }),
});

/** What other domains are given: somewhere to note an internal event. */
export interface DiagnosticsSink {
  record(type: string, detail: string): void;
}

export interface Diagnostics extends DiagnosticsSink {
  /** The newest `limit` events, newest first. */
  list(limit?: number): Static<typeof DiagnosticsResponse>;
  /** Notes state changes from the bus; returns the unsubscribe function. */
  follow(bus: { subscribe(listener: (event: AgEvent) => void): () => void }): () => void;
}

/** Discards everything: for parts built without diagnostics (tests, tools). */
export const NO_DIAGNOSTICS: DiagnosticsSink = { record() {} };

/**
 * Internal events for live debugging, never content: details are written by ag itself, and
 * anything that looks like a path is masked before it is kept.
 */
export function createDiagnostics(options: { now?: () => number; size?: number } = {}): Diagnostics {
  const now = options.now ?? Date.now;
  const size = options.size ?? DIAGNOSTICS_SIZE;
  const ring: DiagnosticsEvent[] = [];
  const lastTransition = new Map<string, string>();

  const diagnostics: Diagnostics = {
    record(type, detail) {
      ring.push({ type, timestamp: new Date(now()).toISOString(), detail: maskPaths(detail) });
      if (ring.length > size) ring.shift();
    },
    list(limit = 50) {
      const events = ring.slice(-limit).reverse();
      return { count: events.length, events };
    },
    follow(bus) {
      return bus.subscribe((event) => {
        const id = event.session?.id;
        if (!id || !isStatusEvent(event)) return;
        const { previous, status, source } = event.meta;
        if (previous !== status) {
          // One transition publishes several events (session.idle and status.idle): note it once.
          // The same from → to twice in a row can only be that: states alternate in between.
          const key = `${previous}→${status}`;
          if (lastTransition.get(id) !== key) {
            lastTransition.set(id, key);
            diagnostics.record("state.change", `session ${id}: ${previous} → ${status} (${source})`);
          }
        }
        // An ended session's last transition is published with session.ended (always last).
        if (event.event === "session.ended") lastTransition.delete(id);
      });
    },
  };
  return diagnostics;
}

/** "/home/me/project/x.ts" → "<path>": a diagnostics event must not reveal files. */
export function maskPaths(text: string): string {
  return text.replace(/(^|[\s"'=(:])(~?\/[^\s"'),:]+)/g, "$1<path>");
}
