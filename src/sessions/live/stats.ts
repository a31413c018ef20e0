/** Counters a live session keeps for metrics and latency (since ag started following it). */

const SAMPLES = 200;

export interface LiveStats {
  followingSince: number;
  deliveries: { sent: number; delivered: number; failed: number; attempts: number };
  /** Milliseconds from paste to the agent's confirmation, recent deliveries. */
  deliveryMs: number[];
  /** Milliseconds from the first evidence of a new state to its publication, recent changes. */
  detectionMs: number[];
  /** Milliseconds spent in each status (the current one up to its last change). */
  timeInState: Record<string, number>;
  statusSince: number;
}

export function pushSample(list: number[], value: number, limit = SAMPLES): void {
  list.push(value);
  if (list.length > limit) list.shift();
}

/**
 * Server-wide totals that must outlive a session (its LiveStats go when it is forgotten): the
 * metrics domain provides one and every live session reports to it.
 */
export interface StatsRecorder {
  /** One prompt delivery: delivered or failed after `attempts` tries, `ms` from paste to confirmation. */
  delivery(delivered: boolean, attempts: number, ms: number): void;
  /** One state change, `ms` from its first evidence to its publication. */
  detection(ms: number): void;
}

export function createLiveStats(now: number): LiveStats {
  return {
    followingSince: now,
    deliveries: { sent: 0, delivered: 0, failed: 0, attempts: 0 },
    deliveryMs: [],
    detectionMs: [],
    timeInState: {},
    statusSince: now,
  };
}
