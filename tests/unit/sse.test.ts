import { describe, expect, test } from "bun:test";
import type { Principal } from "../../src/auth/principal.ts";
import type { SseTokenStore } from "../../src/auth/sse-tokens.ts";
import { type AgEvent, createEventBus, type EventBus, type EventSession } from "../../src/events/bus.ts";
import type { EventName } from "../../src/events/names.ts";
import {
  createSseStreams,
  formatEvent,
  planReplay,
  type SseSettings,
  STREAM_BYTES,
} from "../../src/events/sse.ts";
import { eventRoutes } from "../../src/server/routes/events.ts";
import type { Clock } from "../../src/shared/clock.ts";
import { createManualClock, type ManualClock } from "../fakes/clock.ts";
import { sampleSession, type TestApp, testApp } from "../helpers/app.ts";
import { sampleInput } from "../helpers/events.ts";
import { countingBus, type SseMessage, sseReader } from "../helpers/sse.ts";

const SETTINGS: SseSettings = { idleMs: 120_000, clientTimeoutMs: 300_000 };
const alpha = { id: "s-alpha", name: "alpha", workDir: "/srv/alpha" };
const beta = { id: "s-beta", name: "beta", workDir: "/srv/beta" };

/** An event of `name` (session.working by default) of session alpha, unless given another or none. */
function input(fields: { event?: EventName; session?: EventSession | undefined; detail?: string } = {}) {
  const { event = "session.working", ...rest } = fields;
  return sampleInput(event, { session: alpha, detail: "idle → working", ...rest });
}

/** The manual clock, counting timers that are set and neither fired nor cancelled. */
function countingClock(clock: ManualClock): ManualClock & { pending(): number } {
  const live = new Set<object>();
  return {
    ...clock,
    setTimer(fn, ms) {
      const token = {};
      live.add(token);
      const cancel = clock.setTimer(() => {
        live.delete(token);
        fn();
      }, ms);
      return () => {
        live.delete(token);
        cancel();
      };
    },
    pending: () => live.size,
  };
}

const ids = (messages: SseMessage[]) => messages.filter((m) => m.id).map((m) => Number(m.id));

function setup(options: { bus?: EventBus; clock?: Clock; settings?: Partial<SseSettings> } = {}) {
  const bus = countingBus(options.bus);
  const clock = countingClock(createManualClock());
  const streams = createSseStreams({
    bus,
    clock: options.clock ?? clock,
    settings: { ...SETTINGS, ...options.settings },
  });
  return { bus, clock, streams };
}

describe("message format", () => {
  test("id, event and data = the event minus its id, on one line each", () => {
    const event: AgEvent = {
      id: 7,
      event: "message.assistant",
      timestamp: "2026-01-01T00:00:00.000Z",
      session: alpha,
      detail: "line one\nline two",
      meta: { uuid: "u-1", timestamp: null, sidechain: false },
    };
    expect(formatEvent(event)).toBe(
      "id: 7\nevent: message.assistant\n" +
        'data: {"event":"message.assistant","timestamp":"2026-01-01T00:00:00.000Z",' +
        '"session":{"id":"s-alpha","name":"alpha","workDir":"/srv/alpha"},"detail":"line one\\nline two",' +
        '"meta":{"uuid":"u-1","timestamp":null,"sidechain":false}}\n\n',
    );
  });

  test("a stream starts with a comment so that proxies flush, then carries each event", async () => {
    const { bus, streams } = setup();
    const reader = sseReader(streams.open({ lastEventId: null }));
    const published = [
      bus.publish(input()),
      bus.publish(input({ event: "verification", session: undefined })),
    ];
    const messages = await reader.available();
    expect(messages[0]).toEqual({ comment: "connected" });
    expect(messages.slice(1)).toEqual(
      published.map(({ id, ...data }) => ({ id: String(id), event: data.event, data: { ...data } })),
    );
  });
});

describe("replay plan", () => {
  const held = (from: number, to: number) =>
    Array.from({ length: to - from + 1 }, (_, i) => ({
      ...sampleInput("session.working", { session: alpha }),
      id: from + i,
      timestamp: "",
    }));

  test("no Last-Event-ID: only new events", () => {
    expect(planReplay(held(1, 5), null)).toEqual({ events: [], floor: 0, gap: null });
  });

  test("the events after the id, no gap while the ring still holds the next one", () => {
    const plan = planReplay(held(3, 8), 2);
    expect(plan.events.map((e) => e.id)).toEqual([3, 4, 5, 6, 7, 8]);
    expect(plan.gap).toBeNull();
    expect(planReplay(held(3, 8), 8).events).toEqual([]);
  });

  test("older than the ring holds: what is held, and a gap", () => {
    const plan = planReplay(held(10, 12), 4);
    expect(plan.events.map((e) => e.id)).toEqual([10, 11, 12]);
    expect(plan.gap).toEqual({ reason: "evicted", lastEventId: 4, oldestHeldId: 10 });
  });

  test("an id above the newest is from an earlier run: everything held, and a gap", () => {
    const plan = planReplay(held(1, 3), 500);
    expect(plan.events.map((e) => e.id)).toEqual([1, 2, 3]);
    expect(plan).toMatchObject({ floor: 0, gap: { reason: "restarted", lastEventId: 500, oldestHeldId: 1 } });
    expect(planReplay([], 5).gap).toEqual({ reason: "restarted", lastEventId: 5, oldestHeldId: null });
  });
});

describe("replay and live events", () => {
  test("Last-Event-ID replays exactly the missed events, then continues live", async () => {
    const { bus, streams } = setup();
    for (let i = 0; i < 5; i++) bus.publish(input());
    const reader = sseReader(streams.open({ lastEventId: 2 }));
    bus.publish(input());
    expect(ids(await reader.available())).toEqual([3, 4, 5, 6]);
  });

  test("a session's stream replays and carries only that session's events", async () => {
    const { bus, streams } = setup();
    bus.publish(input({ session: alpha }));
    bus.publish(input({ session: beta }));
    bus.publish(input({ session: undefined, event: "verification" }));
    const reader = sseReader(streams.open({ sessionId: beta.id, lastEventId: 0 }));
    bus.publish(input({ session: alpha }));
    bus.publish(input({ session: beta }));
    const messages = await reader.available();
    expect(ids(messages)).toEqual([2, 5]);
    expect(
      messages.every((m) => m.data === undefined || (m.data.session as { id: string }).id === beta.id),
    ).toBe(true);
  });

  // The bus is synchronous today; these buses publish inside `since` to stand for an event that
  // lands between the subscription and the replay (before and after the ring is read).
  for (const when of ["before", "after"] as const) {
    test(`an event published while the ring is read (${when}) arrives once, in order`, async () => {
      const real = createEventBus();
      for (let i = 0; i < 3; i++) real.publish(input());
      const racing: EventBus = {
        ...real,
        since(id) {
          if (when === "before") real.publish(input());
          const held = real.since(id);
          if (when === "after") real.publish(input());
          return held;
        },
      };
      const { streams } = setup({ bus: racing });
      const reader = sseReader(streams.open({ lastEventId: 1 }));
      real.publish(input());
      expect(ids(await reader.available())).toEqual([2, 3, 4, 5]);
    });
  }

  test("a gap is announced before the replay, without an id", async () => {
    const { bus, streams } = setup({ bus: createEventBus({ ringSize: 3 }) });
    for (let i = 0; i < 6; i++) bus.publish(input());
    const messages = await sseReader(streams.open({ lastEventId: 1 })).available();
    expect(messages[1]).toMatchObject({
      event: "gap",
      data: { event: "gap", meta: { reason: "evicted", lastEventId: 1, oldestHeldId: 4 } },
    });
    expect(messages[1]?.id).toBeUndefined();
    expect(ids(messages)).toEqual([4, 5, 6]);
  });
});

describe("keep-alive and timeout (manual clock)", () => {
  test("a :ping comment after idleMs without writes; an event postpones it", async () => {
    const { bus, clock, streams } = setup({ settings: { idleMs: 1_000, clientTimeoutMs: 10_000 } });
    const reader = sseReader(streams.open({ lastEventId: null }));
    await reader.available();
    clock.advance(999);
    expect(await reader.available()).toEqual([]);
    clock.advance(1);
    expect(await reader.available()).toEqual([{ comment: "ping" }]);
    clock.advance(500);
    bus.publish(input());
    clock.advance(999);
    expect(ids(await reader.available())).toEqual([1]);
    clock.advance(1);
    expect(await reader.available()).toEqual([{ comment: "ping" }]);
  });

  test("closed after clientTimeoutMs without an event; pings do not count, events do", async () => {
    const { bus, clock, streams } = setup({ settings: { idleMs: 1_000, clientTimeoutMs: 5_000 } });
    const reader = sseReader(streams.open({ lastEventId: null }));
    clock.advance(4_000);
    bus.publish(input());
    clock.advance(4_999);
    const before = await reader.available();
    expect(before.filter((m) => m.comment === "ping").length).toBeGreaterThanOrEqual(7);
    expect(streams.clients()).toBe(1);
    clock.advance(1);
    expect(await reader.ended()).toBe("done");
    expect(streams.clients()).toBe(0);
    expect(bus.listeners()).toBe(0);
    expect(clock.pending()).toBe(0);
  });
});

describe("bounded buffer", () => {
  const big = () => input({ event: "message.assistant", detail: "x".repeat(8 * 1024) });

  test("a client that does not read is dropped once maxQueuedEvents wait beyond the stream's bytes", async () => {
    const { bus, clock, streams } = setup({ settings: { maxQueuedEvents: 10 } });
    const stream = streams.open({ lastEventId: null });
    let published = 0;
    while (streams.clients() === 1 && published < 1_000) {
      bus.publish(big());
      published++;
    }
    // The stream took what fits in its bytes; then 10 waited, and the 11th dropped the client.
    const fitting = Math.ceil(STREAM_BYTES / formatEvent(bus.since(0)[0]!).length);
    expect(published).toBeGreaterThan(10);
    expect(published).toBeLessThanOrEqual(fitting + 11);
    expect(bus.listeners()).toBe(0);
    expect(clock.pending()).toBe(0);
    expect(await sseReader(stream).ended()).toBe("error");
  });

  test("a client that reads keeps up through far more events than the bound", async () => {
    const { bus, streams } = setup({ settings: { maxQueuedEvents: 10 } });
    const reader = sseReader(streams.open({ lastEventId: null }));
    let received = 0;
    for (let round = 0; round < 50; round++) {
      for (let i = 0; i < 10; i++) bus.publish(big());
      received += ids(await reader.available()).length;
    }
    expect(received).toBe(500);
    expect(streams.clients()).toBe(1);
  });

  test("a replay larger than the stream's bytes is paced by the reader, not dropped", async () => {
    const bus = createEventBus();
    for (let i = 0; i < 1000; i++) bus.publish(big());
    const { streams } = setup({ bus });
    const reader = sseReader(streams.open({ lastEventId: 0 }));
    expect(ids(await reader.available())).toEqual(Array.from({ length: 1000 }, (_, i) => i + 1));
  });
});

describe("clean-up", () => {
  test("an aborted request ends the stream and lets go of the bus and the timers", async () => {
    const { bus, clock, streams } = setup();
    const abort = new AbortController();
    const reader = sseReader(streams.open({ lastEventId: null, signal: abort.signal }));
    expect([bus.listeners(), clock.pending(), streams.clients()]).toEqual([1, 2, 1]);
    abort.abort();
    expect([bus.listeners(), clock.pending(), streams.clients()]).toEqual([0, 0, 0]);
    expect(await reader.ended()).toBe("done");
  });

  test("a reader that cancels lets go too", async () => {
    const { bus, clock, streams } = setup();
    const reader = sseReader(streams.open({ lastEventId: null }));
    await reader.cancel();
    expect([bus.listeners(), clock.pending(), streams.clients()]).toEqual([0, 0, 0]);
  });

  test("an already aborted request gets an ended stream", async () => {
    const { bus, streams } = setup();
    const reader = sseReader(streams.open({ lastEventId: null, signal: AbortSignal.abort() }));
    expect(await reader.ended()).toBe("done");
    expect(bus.listeners()).toBe(0);
  });
});

/** The real app with the event routes, over this app's own session service. */
type SseTokens = Pick<SseTokenStore, "consume">;

function appWithEvents(options: { authToken?: string; sseTokens?: SseTokens } = {}) {
  const bus = countingBus();
  let ag: TestApp | undefined;
  const routes = eventRoutes({
    bus,
    sessions: { get: (id) => ag!.sessions.get(id), sees: (owner, id) => ag!.sessions.sees(owner, id) },
    clock: createManualClock(),
    settings: SETTINGS,
  });
  ag = testApp({ bus, supervise: false, ...options, plugins: [routes] });
  return { ag, bus };
}

describe("GET /v1/events and /v1/sessions/:id/events", () => {
  test("answers an event stream with the headers proxies and browsers need", async () => {
    const { ag } = appWithEvents();
    const response = await ag.request("GET", "/v1/events");
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe("text/event-stream");
    expect(response.headers.get("cache-control")).toBe("no-store");
    expect(response.headers.get("x-accel-buffering")).toBe("no");
    expect(response.headers.get("connection")).toBe("keep-alive");
    await response.body?.cancel();
  });

  test("without an id, only new events; ?lastEventId= replays; a Last-Event-ID header wins", async () => {
    const { ag, bus } = appWithEvents();
    for (let i = 0; i < 4; i++) bus.publish(input());
    const fresh = sseReader((await ag.request("GET", "/v1/events")).body!);
    bus.publish(input());
    expect(ids(await fresh.available())).toEqual([5]);
    const byQuery = await ag.request("GET", "/v1/events?lastEventId=2");
    expect(ids(await sseReader(byQuery.body!).available())).toEqual([3, 4, 5]);
    const both = await ag.request("GET", "/v1/events?lastEventId=1", { headers: { "last-event-id": "3" } });
    expect(ids(await sseReader(both.body!).available())).toEqual([4, 5]);
  });

  test("an id that is not an event id → 400", async () => {
    const { ag } = appWithEvents();
    for (const [path, headers] of [
      ["/v1/events", { "last-event-id": "abc" }],
      ["/v1/events", { "last-event-id": "-1" }],
      ["/v1/events?lastEventId=x", {}],
      ["/v1/events?lastEventId=1.5", {}],
    ] as const) {
      const response = await ag.request("GET", path, { headers });
      expect(response.status).toBe(400);
      expect((await response.json()).code).toBe("VALIDATION_ERROR");
    }
  });

  test("one session's stream; an unknown session → 404 SESSION_NOT_FOUND", async () => {
    const { ag, bus } = appWithEvents();
    const subscribers = bus.listeners();
    const record = sampleSession();
    ag.repo.insert(record);
    const session = { id: record.id, name: record.name, workDir: record.workDir };
    bus.publish(input({ session }));
    bus.publish(input({ session: alpha }));
    const response = await ag.request("GET", `/v1/sessions/${record.id}/events`, {
      headers: { "last-event-id": "0" },
    });
    expect(response.status).toBe(200);
    expect(ids(await sseReader(response.body!).available())).toEqual([1]);
    const missing = await ag.request("GET", "/v1/sessions/nope/events");
    expect(missing.status).toBe(404);
    expect((await missing.json()).code).toBe("SESSION_NOT_FOUND");
    expect(bus.listeners()).toBe(subscribers + 1);
  });
});

describe("?token= on the event streams (SSE token seam)", () => {
  const reader: Principal = {
    kind: "sse-token",
    actor: "sse-token(test)",
    scopes: new Set(["sessions:read"]),
    tenantId: null,
    sessionId: null,
    keyId: null,
  };
  function singleUse(...tokens: string[]): SseTokens {
    const valid = new Set(tokens);
    return { consume: (token) => (valid.delete(token) ? reader : null) };
  }

  const app = (sseTokens?: SseTokens) => appWithEvents({ authToken: "master-1", sseTokens }).ag;

  async function status(ag: ReturnType<typeof app>, path: string, headers: Record<string, string> = {}) {
    const response = await ag.request("GET", path, { headers });
    if (response.headers.get("content-type") === "text/event-stream") {
      await response.body?.cancel();
      return { status: response.status, error: undefined };
    }
    return { status: response.status, error: (await response.json()).error };
  }

  test("a token ag never issued is refused", async () => {
    expect(await status(app(), "/v1/events?token=anything")).toEqual({
      status: 401,
      error: "invalid SSE token",
    });
  });

  test("a verified token opens the stream, once", async () => {
    const ag = app(singleUse("t-1"));
    expect((await status(ag, "/v1/events?token=t-1")).status).toBe(200);
    expect(await status(ag, "/v1/events?token=t-1")).toEqual({ status: 401, error: "invalid SSE token" });
  });

  test("a session's stream takes it too; no other route does, and the token is not spent there", async () => {
    const ag = app(singleUse("t-2"));
    expect(await status(ag, "/v1/sessions?token=t-2")).toEqual({
      status: 401,
      error: "missing bearer token",
    });
    expect((await status(ag, "/v1/sessions/nope/events?token=t-2")).status).toBe(404);
  });

  test("a valid bearer token does not consult the verifier", async () => {
    let asked = 0;
    const ag = app({
      consume: () => {
        asked++;
        return null;
      },
    });
    const result = await status(ag, "/v1/events?token=whatever", { authorization: "Bearer master-1" });
    expect([result.status, asked]).toEqual([200, 0]);
  });

  test("without SVC_AUTH_TOKEN, a loopback client needs no token and one is ignored", async () => {
    const { ag } = appWithEvents();
    const response = await ag.request("GET", "/v1/events?token=whatever");
    expect(response.status).toBe(200);
    await response.body?.cancel();
  });
});
