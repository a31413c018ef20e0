import type { Delivery } from "../../src/channels/channel.ts";
import type { AgEvent } from "../../src/events/bus.ts";
import type { EventName } from "../../src/events/names.ts";

/** An event about a stalled-looking session, as channel targets receive it. */
export function sampleEvent(name: EventName, overrides: Partial<AgEvent> = {}): AgEvent {
  return {
    id: 1,
    event: name,
    timestamp: "2026-01-01T00:00:00.000Z",
    session: { id: "sess-1", name: "fix-login", workDir: "/repo/app" },
    detail: "no output for 5 minutes",
    meta: {},
    ...overrides,
  };
}

/** The dispatcher's first attempt at delivering `event`. */
export const firstAttempt = (event: AgEvent, id = "delivery-1"): Delivery => ({ id, event, attempt: 1 });

/** A signal nobody aborts. */
export const live = () => new AbortController().signal;
