import type { StatsRecorder } from "../sessions/index.ts";
import { createLatencyHistogram, type LatencyHistogram } from "./histogram.ts";

/** Paste to the agent's confirmation: typically well under a second, seconds when it is busy. */
export const DELIVERY_BUCKETS = [0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30] as const;
/** First evidence to publication: 0 for hooks and transcript lines, the confirmation wait for the screen. */
export const DETECTION_BUCKETS = [0.01, 0.1, 0.5, 1, 1.5, 2, 5, 10, 30] as const;

export interface PromptTotals {
  sent: number;
  delivered: number;
  failed: number;
  attempts: number;
}

/**
 * The server-wide totals every live session reports to (its own counters go when it is
 * forgotten; these last as long as the process). In memory: they restart with ag, as Prometheus
 * counters may.
 */
export interface MetricsRecorder extends StatsRecorder {
  prompts(): PromptTotals;
  readonly deliveryLatency: LatencyHistogram;
  readonly detectionLatency: LatencyHistogram;
}

export function createMetricsRecorder(): MetricsRecorder {
  const prompts: PromptTotals = { sent: 0, delivered: 0, failed: 0, attempts: 0 };
  const deliveryLatency = createLatencyHistogram(DELIVERY_BUCKETS);
  const detectionLatency = createLatencyHistogram(DETECTION_BUCKETS);
  return {
    delivery(delivered, attempts, ms) {
      prompts.sent++;
      prompts.attempts += attempts;
      if (delivered) {
        prompts.delivered++;
        // A failed delivery has no confirmation: its time is not a latency.
        deliveryLatency.observe(ms);
      } else prompts.failed++;
    },
    detection: (ms) => detectionLatency.observe(ms),
    prompts: () => ({ ...prompts }),
    deliveryLatency,
    detectionLatency,
  };
}
