import { afterAll, describe, expect, test } from "bun:test";
import { listen } from "../../src/server/listen.ts";
import { eventRoutes } from "../../src/server/routes/events.ts";
import { systemClock } from "../../src/shared/clock.ts";
import { type TestApp, testApp } from "../helpers/app.ts";
import { sampleInput } from "../helpers/events.ts";
import { startTestRuntime } from "../helpers/runtime.ts";
import { countingBus, type SseMessage, sseReader } from "../helpers/sse.ts";

const session = { id: "s-int", name: "int", workDir: "/srv/int" };
const working = sampleInput("session.working", { session, detail: "idle → working" });
const ids = (messages: SseMessage[]) => messages.map((m) => Number(m.id));

type TestRuntime = Awaited<ReturnType<typeof startTestRuntime>>;
const runtimes: TestRuntime[] = [];
async function runtime(env: Record<string, string> = {}): Promise<TestRuntime> {
  const started = await startTestRuntime(env);
  runtimes.push(started);
  return started;
}
afterAll(async () => {
  for (const started of runtimes.splice(0)) {
    await started.drain(100);
    started.close();
  }
});

function open(url: string, headers: Record<string, string> = {}) {
  const abort = new AbortController();
  const response = fetch(url, { headers, signal: abort.signal });
  return { response, abort };
}

describe("SSE over real HTTP with the real runtime", () => {
  test("a reconnect with Last-Event-ID gets exactly the missed events, then live ones", async () => {
    const ag = await runtime({ SVC_AUTH_TOKEN: "tok-sse" });
    const auth = { authorization: "Bearer tok-sse" };
    const first = open(`${ag.url}/v1/events`, auth);
    const response = await first.response;
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe("text/event-stream");
    const reader = sseReader(response.body!);
    expect(await reader.take(1)).toEqual([{ comment: "connected" }]);
    for (let i = 0; i < 3; i++) ag.bus.publish(working);
    const seen = await reader.take(3);
    first.abort.abort();

    for (let i = 0; i < 3; i++)
      ag.bus.publish(sampleInput("session.idle", { session, detail: "working → idle" }));
    const lastId = seen.at(-1)!.id!;
    const again = sseReader(
      (await open(`${ag.url}/v1/events`, { ...auth, "last-event-id": lastId }).response).body!,
    );
    const [connected, ...missed] = await again.take(4);
    expect(connected).toEqual({ comment: "connected" });
    expect(ids(missed)).toEqual([1, 2, 3].map((i) => Number(lastId) + i));
    expect(missed.map((m) => m.event)).toEqual(["session.idle", "session.idle", "session.idle"]);
    const live = ag.bus.publish(working);
    // The next message is the live event: nothing was sent twice in between.
    expect(ids(await again.take(1))).toEqual([live.id]);
    await again.cancel();
  });

  test("a session's stream: 404 SESSION_NOT_FOUND for an unknown id; no bearer → 401", async () => {
    const ag = await runtime({ SVC_AUTH_TOKEN: "tok-404" });
    const missing = await fetch(`${ag.url}/v1/sessions/nope/events`, {
      headers: { authorization: "Bearer tok-404" },
    });
    expect(missing.status).toBe(404);
    expect((await missing.json()).code).toBe("SESSION_NOT_FOUND");
    expect((await fetch(`${ag.url}/v1/events`)).status).toBe(401);
    expect((await fetch(`${ag.url}/v1/events?token=guess`)).status).toBe(401);
  });

  test(
    "a stream quiet for longer than Bun's 10 s idle timeout stays open, pings, then carries events",
    async () => {
      // Silent for 15 s: longer than Bun's own idle timeout, which would reset the connection.
      const ag = await runtime({ SVC_SSE_IDLE_MS: "15000" });
      const reader = sseReader((await open(`${ag.url}/v1/events`).response).body!);
      expect(await reader.take(1)).toEqual([{ comment: "connected" }]);
      expect(await reader.take(1, 25_000)).toEqual([{ comment: "ping" }]);
      const event = ag.bus.publish(working);
      expect(ids(await reader.take(1))).toEqual([event.id]);
      await reader.cancel();
    },
    { timeout: 30_000 },
  );

  test("a stream without events ends after SVC_SSE_CLIENT_TIMEOUT_MS; a drain ends open ones", async () => {
    const ag = await runtime({ SVC_SSE_CLIENT_TIMEOUT_MS: "300" });
    const quiet = sseReader((await open(`${ag.url}/v1/events`).response).body!);
    expect(await quiet.ended()).toBe("done");

    const other = await runtime();
    const open1 = sseReader((await open(`${other.url}/v1/events`).response).body!);
    expect(await open1.take(1)).toEqual([{ comment: "connected" }]);
    expect(await other.drain(2_000)).toBe(true);
    expect(["done", "error"]).toContain(await open1.ended());
  });
});

describe("a client that goes away", () => {
  test("lets go of its bus subscription when the connection closes", async () => {
    const bus = countingBus();
    let app: TestApp | undefined;
    const routes = eventRoutes({
      bus,
      sessions: { get: (id) => app!.sessions.get(id), sees: (owner, id) => app!.sessions.sees(owner, id) },
      clock: systemClock,
      settings: { idleMs: 60_000, clientTimeoutMs: 60_000 },
    });
    app = testApp({ bus, supervise: false, plugins: [routes] });
    const server = await listen(app, { host: "127.0.0.1", port: 0, maxBodyBytes: 1024 });
    try {
      const before = bus.listeners();
      const clients = Array.from({ length: 5 }, () => open(`http://127.0.0.1:${server.port}/v1/events`));
      const readers = await Promise.all(clients.map(async (c) => sseReader((await c.response).body!)));
      for (const reader of readers) await reader.take(1);
      expect(bus.listeners()).toBe(before + 5);
      for (const client of clients) client.abort.abort();
      for (let i = 0; i < 100 && bus.listeners() > before; i++) await Bun.sleep(20);
      expect(bus.listeners()).toBe(before);
    } finally {
      await server.stop(100);
    }
  });
});
