import type { Delivery } from "../../src/channels/channel.ts";
import type { AgEvent } from "../../src/events/bus.ts";
import type { EventName } from "../../src/events/names.ts";
import { SAMPLE_PAYLOADS } from "./events.ts";

/** An event about a stalled-looking session, as channel targets receive it (the sample payload of its name). */
export function sampleEvent<N extends EventName>(
  name: N,
  overrides: Partial<Omit<AgEvent<N>, "event">> = {},
): AgEvent<N> {
  return {
    id: 1,
    event: name,
    timestamp: "2026-01-01T00:00:00.000Z",
    session: { id: "sess-1", name: "fix-login", workDir: "/repo/app" },
    detail: "no output for 5 minutes",
    meta: SAMPLE_PAYLOADS[name],
    ...overrides,
  } as AgEvent<N>;
}

/** The dashboard the channel targets of the tests link to (config `dashboardUrl`, no trailing slash). */
export const DASHBOARD_URL = "https://ag.example.test/dashboard";

/** The dispatcher's first attempt at delivering `event`. */
export const firstAttempt = (event: AgEvent, id = "delivery-1"): Delivery => ({ id, event, attempt: 1 });

/** A signal nobody aborts. */
export const live = () => new AbortController().signal;
