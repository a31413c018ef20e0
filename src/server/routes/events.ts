import { Elysia, t } from "elysia";
import { type Principal, principalOf } from "../../auth/principal.ts";
import type { AgEvent, EventBus } from "../../events/bus.ts";
import { createSseStreams, type SseSettings } from "../../events/sse.ts";
import { isConfined, type SessionService } from "../../sessions/index.ts";
import type { Clock } from "../../shared/clock.ts";
import { AgError } from "../../shared/errors.ts";
import { IdParams, wholeNumberQuery } from "./params.ts";

const StreamQuery = t.Object({
  lastEventId: t.Optional(
    wholeNumberQuery({
      minimum: 0,
      description: "replay events after this id (for clients that cannot send Last-Event-ID)",
    }),
  ),
  token: t.Optional(t.String({ description: "an SSE token, for clients that cannot send a bearer header" })),
});

/** Sessions a stream remembers it may show (or not); past this many, the oldest are forgotten. */
const MAX_REMEMBERED = 10_000;

/** `connection` is for HTTP/1.0 proxies; `x-accel-buffering` stops nginx holding events back. */
const SSE_HEADERS = {
  "content-type": "text/event-stream",
  "cache-control": "no-store",
  "x-accel-buffering": "no",
  connection: "keep-alive",
};

const STREAM_DESCRIPTION =
  "text/event-stream. Messages: `id` (increasing), `event` (the name), `data` = JSON " +
  "{event, timestamp, session?, detail, meta}. Last-Event-ID (or ?lastEventId=) replays what the " +
  "last 1000 events still hold; `event: gap` says some were missed. `:ping` after SVC_SSE_IDLE_MS " +
  "of silence; closed after SVC_SSE_CLIENT_TIMEOUT_MS without an event.";

/** Documented by hand: the generator knows JSON answers only. */
const STREAM_RESPONSES = {
  200: {
    description: "The event stream, open until the client leaves",
    content: { "text/event-stream": { schema: { type: "string" as const } } },
  },
};

/** The header wins: EventSource sends it on every reconnect, while a URL's query never changes. */
export function lastEventIdOf(request: Request, query: { lastEventId?: number }): number | null {
  const header = request.headers.get("last-event-id");
  if (header === null || header.trim() === "") return query.lastEventId ?? null;
  const id = Number(header.trim());
  if (!/^\d+$/.test(header.trim()) || !Number.isSafeInteger(id)) {
    throw new AgError("VALIDATION_ERROR", "invalid Last-Event-ID: expected the id of an event");
  }
  return id;
}

export function eventRoutes(deps: {
  /** The bus, or in a fleet every host's events (src/fleet). */
  bus: Pick<EventBus, "subscribe" | "since">;
  sessions: Pick<SessionService, "get" | "sees">;
  clock: Clock;
  settings: SseSettings;
}) {
  const streams = createSseStreams(deps);
  /**
   * What a confined caller's stream shows: its own sessions' events, and nothing server-wide.
   * Who may see a session never changes (its tenant and its parent are fixed at its creation),
   * so each stream asks once per session, not once per event.
   */
  function visibleTo(principal: Principal): ((event: AgEvent) => boolean) | undefined {
    if (!isConfined(principal)) return undefined;
    const seen = new Map<string, boolean>();
    return (event) => {
      const id = event.session?.id;
      if (id === undefined) return false;
      let visible = seen.get(id);
      if (visible === undefined) {
        visible = deps.sessions.sees(principal, id);
        seen.set(id, visible);
        if (seen.size > MAX_REMEMBERED) seen.delete(seen.keys().next().value!);
      }
      return visible;
    };
  }
  const respond = (stream: ReadableStream<Uint8Array>) => new Response(stream, { headers: SSE_HEADERS });
  return new Elysia({ name: "routes/events" })
    .get(
      "/v1/events",
      ({ request, query }) => {
        const visible = visibleTo(principalOf(request));
        const lastEventId = lastEventIdOf(request, query);
        return respond(streams.open({ lastEventId, visible, signal: request.signal }));
      },
      {
        query: StreamQuery,
        detail: {
          summary: "Server-Sent Events of every session",
          description: STREAM_DESCRIPTION,
          responses: STREAM_RESPONSES,
        },
      },
    )
    .get(
      "/v1/sessions/:id/events",
      ({ request, query, params }) => {
        const session = deps.sessions.get(params.id);
        const lastEventId = lastEventIdOf(request, query);
        return respond(streams.open({ sessionId: session.id, lastEventId, signal: request.signal }));
      },
      {
        params: IdParams,
        query: StreamQuery,
        detail: {
          summary: "Server-Sent Events of one session",
          description: STREAM_DESCRIPTION,
          responses: STREAM_RESPONSES,
        },
      },
    );
}
