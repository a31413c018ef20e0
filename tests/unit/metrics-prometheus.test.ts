import { describe, expect, test } from "bun:test";
import parse from "parse-prometheus-text-format";
import { createLatencyHistogram } from "../../src/metrics/histogram.ts";
import { formatValue, renderPrometheus } from "../../src/metrics/prometheus.ts";

describe("Prometheus text format 0.0.4", () => {
  test("a counter and a gauge: HELP and TYPE before their samples, one line per labelled sample", () => {
    const text = renderPrometheus([
      {
        name: "ag_prompts_total",
        help: "Prompt deliveries",
        type: "counter",
        samples: [
          { labels: { outcome: "sent" }, value: 3 },
          { labels: { outcome: "failed" }, value: 1 },
        ],
      },
      { name: "ag_uptime_seconds", help: "Seconds since start", type: "gauge", samples: [{ value: 12.5 }] },
    ]);
    expect(text).toBe(
      [
        "# HELP ag_prompts_total Prompt deliveries",
        "# TYPE ag_prompts_total counter",
        'ag_prompts_total{outcome="sent"} 3',
        'ag_prompts_total{outcome="failed"} 1',
        "# HELP ag_uptime_seconds Seconds since start",
        "# TYPE ag_uptime_seconds gauge",
        "ag_uptime_seconds 12.5",
        "",
      ].join("\n"),
    );
    expect(parse(text)).toEqual([
      {
        name: "ag_prompts_total",
        help: "Prompt deliveries",
        type: "COUNTER",
        metrics: [
          { labels: { outcome: "sent" }, value: "3" },
          { labels: { outcome: "failed" }, value: "1" },
        ],
      },
      { name: "ag_uptime_seconds", help: "Seconds since start", type: "GAUGE", metrics: [{ value: "12.5" }] },
    ]);
  });

  test("label values and help text survive backslashes, quotes and line feeds", () => {
    const awkward = 'C:\\dir\\"quoted"\nsecond line';
    const text = renderPrometheus([
      {
        name: "ag_info",
        help: "ends with a backslash \\ and\nwraps",
        type: "gauge",
        samples: [{ labels: { version: awkward, model: "claude-opus-4" }, value: 1 }],
      },
    ]);
    // Every sample stays on one line: a raw line feed would end it early.
    expect(text.trimEnd().split("\n")).toHaveLength(3);
    const [family] = parse(text);
    expect(family!.help).toBe("ends with a backslash \\ and\nwraps");
    expect(family!.metrics[0]!.labels).toEqual({ version: awkward, model: "claude-opus-4" });
  });

  test("a histogram: cumulative buckets, the +Inf bucket equal to the count, sum and count", () => {
    const latency = createLatencyHistogram([0.1, 1, 5]);
    for (const ms of [0, 40, 100, 250, 900, 4000, 12_000]) latency.observe(ms);
    const text = renderPrometheus([
      {
        name: "ag_delivery_latency_seconds",
        help: "Paste to confirmation",
        type: "histogram",
        samples: [latency.sample()],
      },
    ]);
    expect(text).toContain('ag_delivery_latency_seconds_bucket{le="0.1"} 3\n');
    expect(text).toContain('ag_delivery_latency_seconds_bucket{le="+Inf"} 7\n');
    const [family] = parse(text);
    expect(family!.type).toBe("HISTOGRAM");
    const [metric] = family!.metrics;
    expect(metric!.buckets).toEqual({ "0.1": "3", "1": "5", "5": "6", "+Inf": "7" });
    expect(Number(metric!.count)).toBe(7);
    expect(Number(metric!.sum)).toBeCloseTo(17.29, 9);
  });

  test("a labelled histogram keeps its labels on every series, le last", () => {
    const text = renderPrometheus([
      {
        name: "h_seconds",
        help: "h",
        type: "histogram",
        samples: [{ labels: { kind: "a" }, buckets: [{ le: 0.5, count: 1 }], sum: 0.2, count: 2 }],
      },
    ]);
    expect(text).toContain('h_seconds_bucket{kind="a",le="0.5"} 1\n');
    expect(text).toContain('h_seconds_bucket{kind="a",le="+Inf"} 2\n');
    expect(text).toContain('h_seconds_sum{kind="a"} 0.2\n');
    expect(text).toContain('h_seconds_count{kind="a"} 2\n');
    // (The parser folds labelled histograms into bucket maps only, so the text is checked here;
    // ag's own histograms carry no labels.)
    expect(parse(text)[0]!.metrics[0]!.buckets).toEqual({ "0.5": "1", "+Inf": "2" });
  });

  test("special values use the format's spellings", () => {
    expect(formatValue(Number.POSITIVE_INFINITY)).toBe("+Inf");
    expect(formatValue(Number.NEGATIVE_INFINITY)).toBe("-Inf");
    expect(formatValue(Number.NaN)).toBe("NaN");
    expect(formatValue(0.000001)).toBe("0.000001");
  });

  test("names the format does not allow are refused, not written", () => {
    const family = (name: string, label = "ok") =>
      renderPrometheus([
        { name, help: "x", type: "gauge", samples: [{ labels: { [label]: "v" }, value: 1 }] },
      ]);
    expect(() => family("ag-bad")).toThrow("invalid metric name");
    expect(() => family("ag_ok", "bad-label")).toThrow("invalid label name");
    expect(() => family("ag_ok", "__reserved")).toThrow("invalid label name");
    expect(renderPrometheus([])).toBe("");
  });
});

describe("latency histogram", () => {
  test("percentiles over recent samples in milliseconds; counts and sum over all", () => {
    const latency = createLatencyHistogram([1]);
    expect(latency.recent()).toEqual({ count: 0, p50: null, p90: null, max: null });
    for (let ms = 1; ms <= 1500; ms++) latency.observe(ms);
    const recent = latency.recent();
    expect(recent.count).toBe(1500);
    // Only the last 1000 samples (501..1500) are kept for the percentiles.
    expect(recent.p50).toBe(1001);
    expect(recent.p90).toBe(1401);
    expect(recent.max).toBe(1500);
    const sample = latency.sample();
    expect(sample.buckets).toEqual([{ le: 1, count: 1000 }]);
    expect(sample.sum).toBeCloseTo((1500 * 1501) / 2 / 1000, 6);
  });
});
