import type { Static } from "@sinclair/typebox";
import { type Percentiles, percentiles, pushSample } from "../sessions/index.ts";
import type { HistogramSample } from "./prometheus.ts";

/** Recent samples kept server-wide for the JSON percentiles (the histogram itself counts all). */
const RECENT = 1000;

/**
 * A latency distribution kept two ways: cumulative bucket counts in seconds since ag started
 * (what Prometheus wants: they only grow) and the most recent samples in milliseconds (what the
 * JSON percentiles are computed from, as for one session's latency).
 */
export interface LatencyHistogram {
  observe(ms: number): void;
  /** Bucket counts, sum and count in seconds. */
  sample(): HistogramSample;
  /** p50/p90/max in milliseconds over the recent samples, with the count of all. */
  recent(): Static<typeof Percentiles>;
}

/** `bounds` are finite upper bounds in seconds, ascending; +Inf is implied. */
export function createLatencyHistogram(bounds: readonly number[]): LatencyHistogram {
  const counts = bounds.map(() => 0);
  const recent: number[] = [];
  let sumMs = 0;
  let count = 0;
  return {
    observe(ms) {
      const seconds = ms / 1000;
      bounds.forEach((le, i) => {
        if (seconds <= le) counts[i]!++;
      });
      sumMs += ms;
      count++;
      pushSample(recent, ms, RECENT);
    },
    sample: () => ({
      buckets: bounds.map((le, i) => ({ le, count: counts[i]! })),
      sum: sumMs / 1000,
      count,
    }),
    recent: () => ({ ...percentiles(recent), count }),
  };
}
