import { AgError } from "../shared/errors.ts";

/**
 * Admission by memory: a new agent starts only while what one more of its kind is expected to
 * take still leaves the reserve free. A session count does not protect a host; its memory does.
 */
export interface Admission {
  /** Resolves when one more `agent` fits; HOST_MEMORY_LOW (503, Retry-After) when it does not. */
  check(agent: string): Promise<void>;
  /** What one more agent of this kind is expected to take now (bytes). */
  expected(agent: string): number;
  /** Every kind measured so far and what one more is expected to take (bytes). */
  measured(): Record<string, number>;
}

/** Before any agent of a kind was measured: Claude Code idles at ~300 MB and works at far more. */
export const DEFAULT_AGENT_BYTES = 512 * 1024 * 1024;
/** How much a new measure moves the expectation (an exponentially weighted mean). */
const WEIGHT = 0.3;
const MB = 1024 * 1024;
/** A refused create tries again after this long: agents free memory as turns and sessions end. */
export const RETRY_AFTER_SECONDS = 30;

export function createAdmission(deps: {
  /** memoryReserveMb; 0 turns admission off. */
  reserveMb: number;
  /** What the host can still give (bytes), or null where the kernel does not say. */
  available(): Promise<number | null>;
  /** The resident memory of each running agent, by its kind (one entry per session). */
  running(): Promise<Array<{ agent: string; rssBytes: number }>>;
}): Admission {
  const expectation = new Map<string, number>();

  function learn(measured: Array<{ agent: string; rssBytes: number }>): void {
    const byAgent = new Map<string, number[]>();
    for (const { agent, rssBytes } of measured) byAgent.set(agent, [...(byAgent.get(agent) ?? []), rssBytes]);
    for (const [agent, sizes] of byAgent) {
      // The heaviest running one: a new agent grows into what its peers take.
      const now = Math.max(...sizes);
      const before = expectation.get(agent);
      expectation.set(agent, before === undefined ? now : before + WEIGHT * (now - before));
    }
  }

  const admission: Admission = {
    expected: (agent) => expectation.get(agent) ?? DEFAULT_AGENT_BYTES,
    measured: () => Object.fromEntries(expectation),
    async check(agent) {
      if (deps.reserveMb === 0) return;
      const [available, running] = await Promise.all([deps.available(), deps.running()]);
      learn(running);
      if (available === null) return; // no /proc: nothing to go by
      const expected = admission.expected(agent);
      const left = available - expected;
      if (left >= deps.reserveMb * MB) return;
      throw new AgError(
        "HOST_MEMORY_LOW",
        `not enough memory for another ${agent} session: ${Math.floor(available / MB)} MB available, one more is expected to take ${Math.round(expected / MB)} MB, and ${deps.reserveMb} MB are kept free (memoryReserveMb)`,
        { retryAfterSeconds: RETRY_AFTER_SECONDS },
      );
    },
  };
  return admission;
}
