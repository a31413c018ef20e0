import { Database } from "bun:sqlite";
import { describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import parse from "parse-prometheus-text-format";
import { createAgents } from "../../src/agents/index.ts";
import { createMetricsRecorder, createMetricsService } from "../../src/metrics/index.ts";
import { createSessionRepo, SESSION_STATES } from "../../src/sessions/index.ts";
import type { PriceTable } from "../../src/sessions/pricing.ts";
import { createLogger } from "../../src/shared/log.ts";
import { migrate } from "../../src/store/db.ts";
import { MIGRATIONS } from "../../src/store/migrations.ts";
import { createManualClock } from "../fakes/clock.ts";
import { sampleSession } from "../helpers/app.ts";
import { tempDir } from "../helpers/temp.ts";
import { appendUsage, type UsageLine } from "../helpers/usage-lines.ts";

const START = Date.UTC(2026, 0, 1);
const PRICES: PriceTable = { "sonnet-test": { input: 2, output: 10, cacheRead: 0.5, cacheCreation: 4 } };

function setup(prices: PriceTable = PRICES) {
  const db = new Database(":memory:", { strict: true });
  migrate(db, MIGRATIONS);
  const repo = createSessionRepo(db);
  const clock = createManualClock(START);
  const recorder = createMetricsRecorder();
  const logs: string[] = [];
  const metrics = createMetricsService({
    repo,
    agents: createAgents(
      { home: tempDir("ag-home-"), dataDir: null, trustWorkdir: true, selfCommand: ["ag"], isRoot: false },
      { probe: async () => null },
    ),
    recorder,
    clock,
    logger: createLogger({
      level: "debug",
      json: true,
      stream: { write: (l: string) => logs.push(l) } as never,
    }),
    prices,
    version: "1.2.3",
    startedAt: START,
  });
  const dir = tempDir("ag-transcripts-");
  /** A stored session whose agent wrote `lines` to its transcript. */
  function session(lines: UsageLine[], overrides: Parameters<typeof sampleSession>[0] = {}) {
    const transcriptPath = join(dir, `${crypto.randomUUID()}.jsonl`);
    writeFileSync(transcriptPath, "");
    appendUsage(transcriptPath, lines);
    const record = sampleSession({ transcriptPath, ...overrides });
    repo.insert(record);
    return record;
  }
  return { repo, clock, recorder, metrics, session, logs };
}

/** Families by name, every sample value checked to be a number the format allows. */
function scrape(text: string) {
  const families = new Map(parse(text).map((f) => [f.name, f]));
  for (const family of families.values()) {
    for (const metric of family.metrics) {
      for (const value of [metric.value, metric.sum, metric.count, ...Object.values(metric.buckets ?? {})]) {
        if (value !== undefined) expect(Number.isNaN(Number(value.replace("+Inf", "Infinity")))).toBe(false);
      }
    }
  }
  return families;
}

describe("tokens across sessions", () => {
  test("each agent message counts once: across a fork's copy, and with its lines' largest figures", async () => {
    const { metrics, session } = setup();
    const m1 = { id: "msg_1", input: 100, output: 5, cacheRead: 1000, cacheCreation: 10 };
    const m1Final = { ...m1, output: 40 }; // streaming wrote a smaller output count first
    const m2 = { id: "msg_2", input: 200, output: 20 };
    session([m1, m1Final, m2]);
    session([m1Final, m2, { id: "msg_3", input: 7, output: 3 }]); // a fork: its parent's conversation, then its own
    session([{ id: "msg_4", model: "claude-opus-x", input: 1, output: 1, cacheCreation: 2 }]);
    session([], { transcriptPath: null }); // not written down yet

    const report = await metrics.report();
    expect(report.tokens).toEqual({ input: 308, output: 64, cacheRead: 1000, cacheCreation: 12 });
    expect(report.tokensByModel).toEqual({
      "claude-sonnet-test": { input: 307, output: 63, cacheRead: 1000, cacheCreation: 10 },
      "claude-opus-x": { input: 1, output: 1, cacheRead: 0, cacheCreation: 2 },
    });
    // Tracing is off here: no exporter counters, and none in the Prometheus text.
    expect(report.tracing).toBeNull();
    expect(await metrics.prometheus()).not.toContain("ag_tracing_spans_total");
  });

  test("lines appended since the last scrape are added; a pruned session's tokens stay counted", async () => {
    const { metrics, session, repo } = setup();
    const ended = session([{ id: "msg_a", input: 10, output: 1 }], {
      status: "completed",
      endedAt: "2026-01-01T00:00:00.000Z",
    });
    expect((await metrics.report()).tokens.input).toBe(10);

    appendUsage(ended.transcriptPath!, [{ id: "msg_b", input: 5, output: 1 }]);
    expect((await metrics.report()).tokens).toMatchObject({ input: 15, output: 2 });

    expect(repo.pruneEnded("2027-01-01T00:00:00.000Z")).toBe(1);
    // The totals are counters: they do not go down while ag runs, and the file is no longer read.
    appendUsage(ended.transcriptPath!, [{ id: "msg_c", input: 1000 }]);
    expect((await metrics.report()).tokens).toMatchObject({ input: 15, output: 2 });
  });

  test("a transcript rewritten from the start is not counted twice", async () => {
    const { metrics, session } = setup();
    const lines = [
      { id: "msg_1", input: 10, output: 1 },
      { id: "msg_2", input: 20, output: 2 },
    ];
    const record = session(lines);
    await metrics.report();
    writeFileSync(record.transcriptPath!, "");
    appendUsage(record.transcriptPath!, lines.slice(0, 1));
    await metrics.report();
    appendUsage(record.transcriptPath!, lines.slice(1));
    expect((await metrics.report()).tokens).toMatchObject({ input: 30, output: 3 });
  });

  test("concurrent scrapes read each line once and agree", async () => {
    const { metrics, session } = setup();
    session(Array.from({ length: 200 }, (_, i) => ({ id: `msg_${i}`, input: 1, output: 2 })));
    const [a, b] = await Promise.all([metrics.report(), metrics.report()]);
    expect(a.tokens).toMatchObject({ input: 200, output: 400 });
    expect(b.tokens).toEqual(a.tokens);
  });
});

describe("estimated cost", () => {
  test("tokens per model times the price table; models with no price are listed, not guessed", async () => {
    const { metrics, session } = setup();
    session([
      { id: "msg_1", input: 1_000_000, output: 100_000, cacheRead: 2_000_000, cacheCreation: 500_000 },
      { id: "msg_2", model: "mystery-model", input: 5_000_000, output: 5_000_000 },
    ]);
    const report = await metrics.report();
    // 1 M input × $2 + 0.1 M output × $10 + 2 M cache reads × $0.5 + 0.5 M cache writes × $4
    expect(report.estimatedCost).toEqual({ usd: 6, unpriced: ["mystery-model"] });
  });

  test("per session: each conversation's own tokens and cost, a fork's copy included; none without a transcript", async () => {
    const { metrics, session } = setup();
    const m1 = { id: "msg_1", input: 1_000_000, output: 10_000 };
    const parent = session([m1, { ...m1, output: 100_000 }]); // one message, its largest figures
    const fork = session([
      { ...m1, output: 100_000 },
      { id: "msg_2", input: 500_000, output: 0 },
    ]);
    session([], { transcriptPath: null });
    const report = await metrics.report();
    const bySession = Object.fromEntries(report.bySession.map((s) => [s.id, s]));
    expect(Object.keys(bySession).sort()).toEqual([parent.id, fork.id].sort());
    expect(bySession[parent.id]).toEqual({
      id: parent.id,
      tokens: { input: 1_000_000, output: 100_000, cacheRead: 0, cacheCreation: 0 },
      estimatedCost: { usd: 3, unpriced: [] }, // 1 M × $2 + 0.1 M × $10
    });
    expect(bySession[fork.id]!.tokens.input).toBe(1_500_000);
    expect(bySession[fork.id]!.estimatedCost.usd).toBe(4);
    // The server's total counts the shared message once.
    expect(report.tokens.input).toBe(1_500_000);
  });
});

describe("server-wide report", () => {
  test("sessions by state (every state), uptime on the injected clock, the version", async () => {
    const { metrics, session, clock } = setup();
    session([], { status: "working" });
    session([], { status: "working" });
    session([], { status: "idle" });
    session([], { status: "killed", endedAt: "2026-01-01T00:00:00.000Z" });
    clock.advance(90_000);
    const report = await metrics.report();
    expect(report.version).toBe("1.2.3");
    expect(report.startedAt).toBe("2026-01-01T00:00:00.000Z");
    expect(report.uptimeSeconds).toBe(90);
    expect(report.sessions.total).toBe(4);
    expect(report.sessions.active).toBe(3);
    expect(Object.keys(report.sessions.byState).sort()).toEqual([...SESSION_STATES].sort());
    expect(report.sessions.byState).toMatchObject({ working: 2, idle: 1, killed: 1, stalled: 0 });
  });

  test("prompt outcomes and latencies from what the sessions reported", async () => {
    const { metrics, recorder } = setup();
    recorder.delivery(true, 1, 120);
    recorder.delivery(true, 2, 800);
    recorder.delivery(false, 3, 2_000);
    recorder.detection(0);
    recorder.detection(0);
    recorder.detection(1_500);
    const report = await metrics.report();
    expect(report.prompts).toEqual({ sent: 3, delivered: 2, failed: 1, attempts: 6 });
    // A failed delivery has no confirmation, so no latency.
    expect(report.latency.deliveryMs).toEqual({ count: 2, p50: 800, p90: 800, max: 800 });
    expect(report.latency.stateDetectionMs).toEqual({ count: 3, p50: 0, p90: 1_500, max: 1_500 });
  });

  test("the Prometheus text: ag_ families with HELP and TYPE, values as in the JSON", async () => {
    const { metrics, recorder, session, clock } = setup();
    session([{ id: "msg_1", input: 1_000_000, output: 0 }], { status: "stalled" });
    recorder.delivery(true, 1, 120);
    recorder.delivery(true, 1, 800);
    recorder.delivery(false, 3, 2_000);
    recorder.detection(1_500);
    clock.advance(5_000);
    const families = scrape(await metrics.prometheus());
    const value = (name: string, labels: Record<string, string> = {}) =>
      Number(
        families.get(name)?.metrics.find((m) => Object.entries(labels).every(([k, v]) => m.labels?.[k] === v))
          ?.value,
      );

    for (const family of families.values()) {
      expect(family.name).toStartWith("ag_");
      expect(family.help.length).toBeGreaterThan(0);
    }
    expect(families.get("ag_info")!.metrics).toEqual([{ labels: { version: "1.2.3" }, value: "1" }]);
    expect(value("ag_uptime_seconds")).toBe(5);
    expect(value("ag_start_time_seconds")).toBe(START / 1000);
    expect(families.get("ag_sessions")!.type).toBe("GAUGE");
    expect(families.get("ag_sessions")!.metrics).toHaveLength(SESSION_STATES.length);
    expect(value("ag_sessions", { state: "stalled" })).toBe(1);
    expect(value("ag_sessions", { state: "idle" })).toBe(0);
    expect(families.get("ag_tokens_total")!.type).toBe("COUNTER");
    expect(value("ag_tokens_total", { type: "input" })).toBe(1_000_000);
    expect(value("ag_tokens_total", { type: "cache_read" })).toBe(0);
    expect(value("ag_estimated_cost_usd")).toBe(2);
    expect(value("ag_unpriced_models")).toBe(0);
    expect(families.get("ag_prompts_total")!.type).toBe("COUNTER");
    expect(value("ag_prompts_total", { outcome: "sent" })).toBe(3);
    expect(value("ag_prompts_total", { outcome: "delivered" })).toBe(2);
    expect(value("ag_prompts_total", { outcome: "failed" })).toBe(1);
    expect(value("ag_prompt_delivery_attempts_total")).toBe(5);

    const delivery = families.get("ag_delivery_latency_seconds")!;
    expect(delivery.type).toBe("HISTOGRAM");
    expect(delivery.metrics[0]).toMatchObject({ count: "2", sum: "0.92" });
    expect(delivery.metrics[0]!.buckets).toMatchObject({
      "0.1": "0",
      "0.25": "1",
      "0.5": "1",
      "1": "2",
      "+Inf": "2",
    });
    const detection = families.get("ag_state_detection_latency_seconds")!;
    expect(detection.metrics[0]).toMatchObject({ count: "1", sum: "1.5" });
    expect(detection.metrics[0]!.buckets).toMatchObject({ "1": "0", "1.5": "1", "+Inf": "1" });
  });

  test("an unreadable transcript is logged and skipped; the rest still count", async () => {
    const { metrics, session, logs } = setup();
    session([{ id: "msg_1", input: 3 }]);
    session([], { transcriptPath: tempDir("ag-not-a-file-") }); // a directory: reading it fails
    expect((await metrics.report()).tokens.input).toBe(3);
    expect(logs.some((l) => l.includes("metrics: reading"))).toBe(true);
  });
});
