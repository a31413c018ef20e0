import { afterAll, describe, expect, test } from "bun:test";
import { agEnv, compiledBinary, startAg } from "../helpers/binary.ts";
import {
  attrs,
  SPAN_KIND_INTERNAL,
  SPAN_KIND_SERVER,
  STATUS_CODE_ERROR,
  startCollector,
} from "../helpers/otlp.ts";
import { tempDir } from "../helpers/temp.ts";

/** Tracing through the compiled binary, against a loopback OTLP/HTTP receiver (tests/helpers/otlp.ts). */

const servers: Array<{ stop(force?: boolean): unknown }> = [];
afterAll(() => {
  for (const server of servers) server.stop(true);
});

describe("tracing on the compiled binary", () => {
  test("SERVER spans by route, session.create/kill under them, a webhook attempt whose traceparent the receiver gets, log lines with the trace id", async () => {
    const collector = startCollector();
    const hooks: Headers[] = [];
    const receiver = Bun.serve({
      port: 0,
      hostname: "127.0.0.1",
      fetch(request) {
        hooks.push(request.headers);
        return new Response("ok");
      },
    });
    servers.push(collector.server, receiver);
    const ag = await startAg(await compiledBinary(), ["--port", "0", "--host", "127.0.0.1", "--json-logs"], {
      env: agEnv({
        SVC_OTEL_ENABLED: "true",
        SVC_OTEL_OTLP_ENDPOINT: collector.url,
        SVC_OTEL_SERVICE_NAME: "ag-e2e",
        SVC_WEBHOOKS: JSON.stringify([
          { url: `http://127.0.0.1:${receiver.port}/hook`, events: ["session.created"] },
        ]),
      }),
    });
    const call = (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) =>
      fetch(`${ag.url}${path}`, {
        method,
        headers: { "content-type": "application/json", authorization: `Bearer ${ag.token()}`, ...headers },
        body: body === undefined ? undefined : JSON.stringify(body),
      });

    // A caller's trace is continued: its trace id, our span a child of its span.
    const callerTrace = "4bf92f3577b34da6a3ce929d0e0e4736";
    const callerSpan = "00f067aa0ba902b7";
    expect(
      (await call("GET", "/v1/health", undefined, { traceparent: `00-${callerTrace}-${callerSpan}-01` }))
        .status,
    ).toBe(200);
    const unknown = "00000000-0000-4000-8000-000000000000";
    expect((await call("GET", `/v1/sessions/${unknown}`)).status).toBe(404);
    const created = await call("POST", "/v1/sessions", {
      name: "traced",
      workDir: tempDir(),
      agentCommand: "sh -c 'sleep 600'",
    });
    expect(created.status).toBe(201);
    const session = (await created.json()) as { id: string };
    // ag's keys into the session: a span of their own under the request's.
    expect((await call("POST", `/v1/sessions/${session.id}/escape`)).status).toBe(200);
    expect((await call("DELETE", `/v1/sessions/${session.id}`)).status).toBe(200);

    const deadline = Date.now() + 10_000;
    while (hooks.length === 0 && Date.now() < deadline) await Bun.sleep(50);
    expect(hooks).toHaveLength(1);

    // The exporter's counters are in /metrics (the collector is up: nothing failed or dropped).
    const metrics = (await (await call("GET", "/v1/metrics")).json()) as {
      tracing: { exported: number; failed: number; dropped: number } | null;
    };
    expect(metrics.tracing).toMatchObject({ failed: 0, dropped: 0 });
    expect(await (await call("GET", "/metrics")).text()).toContain(
      'ag_tracing_spans_total{outcome="dropped"} 0',
    );

    // Graceful shutdown flushes what is still queued.
    expect(await ag.stop("SIGTERM")).toBe(0);
    expect(collector.paths.every((p) => p === "POST /v1/traces application/json")).toBe(true);
    const spans = collector.spans();
    const named = (name: string) => spans.filter((s) => s.name === name);

    const health = named("GET /v1/health");
    expect(health).toHaveLength(1);
    expect(health[0]).toMatchObject({
      kind: SPAN_KIND_SERVER,
      traceId: callerTrace,
      parentSpanId: callerSpan,
    });
    expect(health[0]!.resource).toMatchObject({
      "service.name": "ag-e2e",
      "service.version": expect.any(String),
    });
    expect(attrs(health[0]!.attributes)).toMatchObject({
      "http.request.method": "GET",
      "http.route": "/v1/health",
      "url.path": "/v1/health",
      "http.response.status_code": 200,
    });

    // Named by the route's pattern, never the id; the envelope's code as error.type.
    expect(spans.some((s) => s.name.includes(unknown))).toBe(false);
    const lookups = named("GET /v1/sessions/:id");
    expect(lookups).toHaveLength(1);
    expect(attrs(lookups[0]!.attributes)).toMatchObject({
      "http.route": "/v1/sessions/:id",
      "url.path": `/v1/sessions/${unknown}`,
      "http.response.status_code": 404,
      "error.type": "SESSION_NOT_FOUND",
    });
    // A 4xx is the client's: OTel's HTTP conventions leave a SERVER span's status unset.
    expect(lookups[0]!.status?.code ?? 0).not.toBe(STATUS_CODE_ERROR);

    const [post] = named("POST /v1/sessions");
    const [create] = named("session.create");
    expect(post).toBeDefined();
    expect(create).toMatchObject({
      kind: SPAN_KIND_INTERNAL,
      traceId: post!.traceId,
      parentSpanId: post!.spanId,
    });
    expect(attrs(create!.attributes)).toMatchObject({
      "ag.session.id": session.id,
      "ag.session.reused": false,
    });
    expect(create!.events?.map((e) => e.name)).toContain("session.launched");

    const [escapeRequest] = named("POST /v1/sessions/:id/escape");
    expect(named("session.escape")[0]).toMatchObject({
      kind: SPAN_KIND_INTERNAL,
      traceId: escapeRequest!.traceId,
      parentSpanId: escapeRequest!.spanId,
    });

    const [del] = named("DELETE /v1/sessions/:id");
    const [kill] = named("session.kill");
    expect(kill).toMatchObject({
      kind: SPAN_KIND_INTERNAL,
      traceId: del!.traceId,
      parentSpanId: del!.spanId,
    });
    expect(attrs(kill!.attributes)).toMatchObject({
      "ag.session.id": session.id,
      "ag.session.end_reason": "killed",
    });

    // The webhook attempt: its span's context is what the receiver got as traceparent.
    const [attempt] = named("channel.webhook.session.created");
    expect(attempt).toMatchObject({ kind: SPAN_KIND_INTERNAL, traceId: post!.traceId });
    expect(attrs(attempt!.attributes)).toMatchObject({
      "ag.delivery.attempt": 1,
      "ag.session.id": session.id,
    });
    expect(hooks[0]!.get("traceparent")).toBe(`00-${attempt!.traceId}-${attempt!.spanId}-01`);

    // Log lines written inside the create carry its trace.
    const lines = ag
      .stderr()
      .split("\n")
      .filter((l) => l.startsWith("{"))
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    const createdLine = lines.find((l) => l.event === "session.created");
    expect(createdLine).toMatchObject({
      traceId: post!.traceId,
      spanId: expect.stringMatching(/^[0-9a-f]{16}$/),
    });
    // And lines outside any request do not.
    expect(lines.find((l) => String(l.msg).includes("listening on"))?.traceId).toBeUndefined();
  }, 60_000);

  test("with SVC_OTEL_SAMPLE_RATE=0 nothing is sent", async () => {
    const collector = startCollector();
    servers.push(collector.server);
    const ag = await startAg(await compiledBinary(), ["--port", "0", "--host", "127.0.0.1", "--json-logs"], {
      env: agEnv({
        SVC_OTEL_ENABLED: "true",
        SVC_OTEL_OTLP_ENDPOINT: collector.url,
        SVC_OTEL_SAMPLE_RATE: "0",
      }),
    });
    for (let i = 0; i < 5; i++) expect((await fetch(`${ag.url}/v1/health`)).status).toBe(200);
    expect((await fetch(`${ag.url}/v1/sessions/nope`)).status).toBe(404);
    expect(await ag.stop("SIGTERM")).toBe(0);
    expect(collector.requests).toEqual([]);
    expect(ag.stderr()).not.toContain('"traceId"');
  }, 30_000);
});
