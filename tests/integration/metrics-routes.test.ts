import { describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import parse from "parse-prometheus-text-format";
import { CLAUDE_PRICES as DEFAULT_PRICES } from "../../src/agents/claude/prices.ts";
import { createAgents } from "../../src/agents/index.ts";
import { createMetricsRecorder, createMetricsService } from "../../src/metrics/index.ts";
import { listen } from "../../src/server/listen.ts";
import { metricsRoutes } from "../../src/server/routes/metrics.ts";
import { systemClock } from "../../src/shared/clock.ts";
import { createLogger } from "../../src/shared/log.ts";
import { type TestApp, testApp } from "../helpers/app.ts";
import { hook, simulateAgents } from "../helpers/simulated-agent.ts";
import { tempDir } from "../helpers/temp.ts";
import { appendUsage, type UsageLine } from "../helpers/usage-lines.ts";

// biome-ignore lint/suspicious/noExplicitAny: response bodies are inspected field by field
type Json = Record<string, any>;

/** The real app over the fake tmux, with the metrics routes wired as the runtime wires them. */
function metricsApp(options: { authToken?: string } = {}): TestApp {
  const recorder = createMetricsRecorder();
  let app: TestApp | undefined;
  const metrics = createMetricsService({
    // The app's own database, once it exists (routes run only after).
    repo: { list: (q) => app!.repo.list(q), stats: () => app!.repo.stats() },
    agents: createAgents(
      { home: tempDir("ag-home-"), dataDir: null, trustWorkdir: true, selfCommand: ["ag"], isRoot: false },
      { probe: async () => null },
    ),
    recorder,
    clock: systemClock,
    logger: createLogger({ level: "error", json: true, stream: { write: () => true } as never }),
    prices: DEFAULT_PRICES,
    version: "0.0.0-test",
    startedAt: Date.now(),
  });
  app = testApp({ ...options, recorder, plugins: [metricsRoutes(metrics)] });
  return app;
}

async function json(app: TestApp, path: string): Promise<Json> {
  const response = await app.request("GET", path);
  expect(response.status).toBe(200);
  return (await response.json()) as Json;
}

/** /metrics through the real parser: families by name. */
async function scrape(app: TestApp) {
  const response = await app.request("GET", "/metrics");
  expect(response.status).toBe(200);
  expect(response.headers.get("content-type")).toBe("text/plain; version=0.0.4; charset=utf-8");
  const families = new Map(parse(await response.text()).map((f) => [f.name, f]));
  const value = (name: string, labels: Record<string, string> = {}) => {
    const metric = families
      .get(name)
      ?.metrics.find((m) => Object.entries(labels).every(([k, v]) => m.labels?.[k] === v));
    return metric?.value === undefined ? Number.NaN : Number(metric.value);
  };
  return { families, value };
}

/** A session the simulated agent runs, with `lines` in the transcript its hooks name. */
async function runningSession(app: TestApp, prompt: string, lines: UsageLine[]): Promise<string> {
  const response = await app.request("POST", "/v1/sessions", { body: { workDir: tempDir(), prompt } });
  expect(response.status).toBe(201);
  const { id } = (await response.json()) as Json;
  const transcript = join(tempDir("ag-transcript-"), `${id}.jsonl`);
  writeFileSync(transcript, "");
  appendUsage(transcript, lines);
  await hook(app, id, "Notification", { transcript_path: transcript, message: "working" });
  return id;
}

describe("GET /v1/metrics and GET /metrics over live sessions", () => {
  test("sessions by state, de-duplicated tokens and cost, prompt outcomes and latencies agree", async () => {
    const app = metricsApp();
    // Enters 1-3 are accepted (three prompts delivered); every later one is lost.
    simulateAgents(app, { acceptEnter: (n) => n <= 3 });
    const m1 = { id: "msg_1", input: 1200, output: 300, cacheRead: 40_000, cacheCreation: 900 };
    const m2 = { id: "msg_2", input: 800, output: 150 };
    const parent = await runningSession(app, "one", [m1, m2]);
    // A fork's transcript starts with its parent's conversation: msg_1 and msg_2 again.
    const fork = await runningSession(app, "two", [m1, m2, { id: "msg_3", input: 50, output: 25 }]);
    const other = await runningSession(app, "three", [
      { id: "msg_4", model: "claude-haiku-test", input: 10_000, output: 2_000 },
    ]);
    const failed = await app.request("POST", `/v1/sessions/${parent}/send`, { body: { text: "four" } });
    expect(failed.status).toBeLessThan(500);

    const report = await json(app, "/v1/metrics");
    const perSession = await Promise.all(
      [parent, fork, other].map((id) => json(app, `/v1/sessions/${id}/metrics`)),
    );
    const [p, f, o] = perSession;
    // The fork's own totals include its parent's messages; the server counts them once.
    expect(f!.tokens.input).toBe(p!.tokens.input + 50);
    for (const key of ["input", "output", "cacheRead", "cacheCreation"]) {
      expect(report.tokens[key]).toBe(f!.tokens[key] + o!.tokens[key]);
    }
    expect(report.estimatedCost.usd).toBeCloseTo(f!.estimatedCost.usd + o!.estimatedCost.usd, 6);
    expect(report.estimatedCost.usd).toBeGreaterThan(0);
    expect(report.estimatedCost.unpriced).toEqual([]);

    const stats = await json(app, "/v1/sessions/stats");
    expect(report.sessions).toEqual({ total: stats.total, active: stats.active, byState: stats.byStatus });
    expect(report.sessions.total).toBe(3);
    const deliveries = perSession.map((s) => s.deliveries);
    expect(report.prompts).toEqual({
      sent: deliveries.reduce((n, d) => n + d.sent, 0),
      delivered: deliveries.reduce((n, d) => n + d.delivered, 0),
      failed: deliveries.reduce((n, d) => n + d.failed, 0),
      attempts: deliveries.reduce((n, d) => n + d.attempts, 0),
    });
    expect(report.prompts).toMatchObject({ sent: 4, delivered: 3, failed: 1 });
    expect(report.latency.deliveryMs.count).toBe(3);
    expect(report.latency.stateDetectionMs.count).toBeGreaterThan(0);

    const { families, value } = await scrape(app);
    for (const state of Object.keys(stats.byStatus)) {
      expect(value("ag_sessions", { state })).toBe(stats.byStatus[state]);
    }
    expect(value("ag_tokens_total", { type: "input" })).toBe(report.tokens.input);
    expect(value("ag_tokens_total", { type: "output" })).toBe(report.tokens.output);
    expect(value("ag_tokens_total", { type: "cache_read" })).toBe(report.tokens.cacheRead);
    expect(value("ag_tokens_total", { type: "cache_creation" })).toBe(report.tokens.cacheCreation);
    expect(value("ag_estimated_cost_usd")).toBeCloseTo(report.estimatedCost.usd, 6);
    expect(value("ag_prompts_total", { outcome: "sent" })).toBe(4);
    expect(value("ag_prompts_total", { outcome: "delivered" })).toBe(3);
    expect(value("ag_prompts_total", { outcome: "failed" })).toBe(1);
    expect(value("ag_prompt_delivery_attempts_total")).toBe(report.prompts.attempts);
    const delivery = families.get("ag_delivery_latency_seconds")!;
    expect(delivery.type).toBe("HISTOGRAM");
    expect(Number(delivery.metrics[0]!.count)).toBe(3);
    expect(Number(delivery.metrics[0]!.buckets!["+Inf"])).toBe(3);
    const detection = families.get("ag_state_detection_latency_seconds")!;
    expect(Number(detection.metrics[0]!.count)).toBe(report.latency.stateDetectionMs.count);
    expect(value("ag_uptime_seconds")).toBeGreaterThanOrEqual(0);
    expect(families.get("ag_info")!.metrics[0]!.labels).toEqual({ version: "0.0.0-test" });
  });

  test("the server's counters outlive the sessions that reported them", async () => {
    const app = metricsApp();
    simulateAgents(app);
    const id = await runningSession(app, "hello", [{ id: "msg_x", input: 100, output: 10 }]);
    const before = await scrape(app);
    expect(before.value("ag_prompts_total", { outcome: "delivered" })).toBe(1);
    expect(before.value("ag_tokens_total", { type: "input" })).toBe(100);

    expect((await app.request("DELETE", `/v1/sessions/${id}`)).status).toBe(200);
    expect(() => app.live.running(id)).toThrow(); // forgotten, its own counters with it
    const after = await scrape(app);
    expect(after.value("ag_prompts_total", { outcome: "delivered" })).toBe(1);
    expect(after.value("ag_tokens_total", { type: "input" })).toBe(100);
    expect(after.value("ag_sessions", { state: "killed" })).toBe(1);
    expect(
      after.value("ag_sessions", { state: "working" }) + after.value("ag_sessions", { state: "idle" }),
    ).toBe(0);
    expect(Number(after.families.get("ag_delivery_latency_seconds")!.metrics[0]!.count)).toBe(1);
  });

  test("with a token, both need it (like every route but health)", async () => {
    const app = metricsApp({ authToken: "tok-metrics" });
    for (const path of ["/metrics", "/v1/metrics"]) {
      expect((await app.request("GET", path)).status).toBe(401);
      const ok = await app.request("GET", path, { headers: { authorization: "Bearer tok-metrics" } });
      expect(ok.status).toBe(200);
    }
  });

  test("over real HTTP: the text format's content type, parsed by the real parser", async () => {
    const app = metricsApp();
    const server = await listen(app, { host: "127.0.0.1", port: 0, maxBodyBytes: 1024 * 1024 });
    try {
      const response = await fetch(`http://127.0.0.1:${server.port}/metrics`);
      expect(response.status).toBe(200);
      expect(response.headers.get("content-type")).toBe("text/plain; version=0.0.4; charset=utf-8");
      const names = parse(await response.text()).map((f) => f.name);
      expect(names).toContain("ag_sessions");
      expect(names).toContain("ag_state_detection_latency_seconds");
    } finally {
      await server.stop(100);
    }
  });

  test("GET /v1/metrics is in the OpenAPI document with its schema", async () => {
    const doc = await json(metricsApp(), "/v1/openapi.json");
    const operation = doc.paths["/v1/metrics"].get;
    expect(operation.security).toEqual([{ bearer: [] }]);
    expect(operation.responses["200"].content["application/json"].schema.properties).toHaveProperty(
      "estimatedCost",
    );
  });
});
