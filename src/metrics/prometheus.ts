/**
 * The Prometheus text exposition format, version 0.0.4: metric families with their HELP and TYPE
 * lines, counters, gauges and histograms. Pure: families in, text out.
 */

export const PROMETHEUS_CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8";

export type Labels = Record<string, string>;

export interface Sample {
  labels?: Labels;
  value: number;
}

export interface HistogramSample {
  labels?: Labels;
  /** Upper bounds with the number of observations at or below each (cumulative), ascending. */
  buckets: Array<{ le: number; count: number }>;
  sum: number;
  count: number;
}

export type MetricFamily =
  | { name: string; help: string; type: "counter" | "gauge"; samples: Sample[] }
  | { name: string; help: string; type: "histogram"; samples: HistogramSample[] };

const METRIC_NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;

export function renderPrometheus(families: readonly MetricFamily[]): string {
  const lines: string[] = [];
  for (const family of families) {
    if (!METRIC_NAME.test(family.name)) throw new Error(`invalid metric name ${family.name}`);
    lines.push(`# HELP ${family.name} ${escapeHelp(family.help)}`, `# TYPE ${family.name} ${family.type}`);
    if (family.type === "histogram") {
      for (const sample of family.samples) lines.push(...histogramLines(family.name, sample));
    } else {
      for (const sample of family.samples) lines.push(line(family.name, sample.labels, sample.value));
    }
  }
  return lines.length ? `${lines.join("\n")}\n` : "";
}

function histogramLines(name: string, sample: HistogramSample): string[] {
  const lines = sample.buckets.map((bucket) =>
    line(`${name}_bucket`, { ...sample.labels, le: formatValue(bucket.le) }, bucket.count),
  );
  // The +Inf bucket is every observation: the format requires it, whatever the bounds.
  lines.push(line(`${name}_bucket`, { ...sample.labels, le: "+Inf" }, sample.count));
  lines.push(
    line(`${name}_sum`, sample.labels, sample.sum),
    line(`${name}_count`, sample.labels, sample.count),
  );
  return lines;
}

function line(name: string, labels: Labels | undefined, value: number): string {
  const pairs = Object.entries(labels ?? {});
  if (pairs.length === 0) return `${name} ${formatValue(value)}`;
  const rendered = pairs.map(([key, v]) => {
    if (!LABEL_NAME.test(key) || key.startsWith("__")) throw new Error(`invalid label name ${key}`);
    return `${key}="${escapeLabelValue(v)}"`;
  });
  return `${name}{${rendered.join(",")}} ${formatValue(value)}`;
}

/** Go's ParseFloat spellings: the format has no other way to say infinity or not-a-number. */
export function formatValue(value: number): string {
  if (Number.isNaN(value)) return "NaN";
  if (value === Number.POSITIVE_INFINITY) return "+Inf";
  if (value === Number.NEGATIVE_INFINITY) return "-Inf";
  return String(value);
}

/** In HELP text only backslash and line feed are escaped. */
function escapeHelp(text: string): string {
  return text.replace(/\\/g, "\\\\").replace(/\n/g, "\\n");
}

/** In label values, the double quote too. */
function escapeLabelValue(text: string): string {
  return text.replace(/\\/g, "\\\\").replace(/\n/g, "\\n").replace(/"/g, '\\"');
}
