import { AgError } from "../shared/errors.ts";

/**
 * Room held for one launch: from its admission until its agent has started (its first prompt
 * box, dialog or end) and counts like any running agent, or until the launch failed.
 */
export interface Reservation {
  /** The launch is this session's: what its agent already takes is no longer held twice. */
  bind(sessionId: string): void;
  /** The launch failed: the room is given back. Idempotent. */
  release(): void;
}

/**
 * Admission by memory: a new agent starts only while what one more of its kind is expected to
 * take still leaves the reserve free. A session count does not protect a host; its memory does.
 * Admissions are decided one at a time, and each launch holds what its agent is expected to take
 * until that agent has started: an agent that is still starting has not taken its memory yet, so
 * the host's reading alone would let every concurrent create through.
 */
export interface Admission {
  /** Room for one more `agent`, held until released; HOST_MEMORY_LOW (503, Retry-After) when there is none. */
  reserve(agent: string): Promise<Reservation>;
  /** The session's agent has started (or its session ended): its launch no longer holds room. */
  started(sessionId: string): void;
  /** What one more agent of this kind is expected to take now (bytes). */
  expected(agent: string): number;
  /** Every kind measured so far and what one more is expected to take (bytes). */
  measured(): Record<string, number>;
  /** What the launches still under way hold, each (bytes, as of the last look). */
  holding(): Array<{ agent: string; sessionId: string | null; bytes: number }>;
}

/** Before any agent of a kind was measured: Claude Code idles at ~300 MB and works at far more. */
export const DEFAULT_AGENT_BYTES = 512 * 1024 * 1024;
/** How much a new measure moves the expectation (an exponentially weighted mean). */
const WEIGHT = 0.3;
const MB = 1024 * 1024;
/** A refused create tries again after this long: agents free memory as turns and sessions end. */
export const RETRY_AFTER_SECONDS = 30;

/** A running session's agent and its resident memory. */
export interface MeasuredAgent {
  id: string;
  agent: string;
  rssBytes: number;
}

interface Hold {
  agent: string;
  /** What its agent is expected to take, all told. */
  bytes: number;
  sessionId: string | null;
  /** Of `bytes`, what its agent does not take yet (at the last look): the room still held. */
  owed: number;
}

const NO_HOLD: Reservation = { bind() {}, release() {} };

export function createAdmission(deps: {
  /** memoryReserveMb; 0 turns admission off. */
  reserveMb: number;
  /** What the host can still give (bytes), or null where the kernel does not say. */
  available(): Promise<number | null>;
  /** The resident memory of each running agent, by its session and kind. */
  running(): Promise<MeasuredAgent[]>;
  /** Room was given back (a launch failed, an agent started): whoever waits may look again. */
  freed?: () => void;
}): Admission {
  const expectation = new Map<string, number>();
  const holds = new Set<Hold>();
  /** One decision at a time: each sees the room the ones before it took. */
  let deciding: Promise<unknown> = Promise.resolve();

  function learn(measured: MeasuredAgent[]): void {
    const byAgent = new Map<string, number[]>();
    for (const { agent, rssBytes } of measured) byAgent.set(agent, [...(byAgent.get(agent) ?? []), rssBytes]);
    for (const [agent, sizes] of byAgent) {
      // The heaviest running one: a new agent grows into what its peers take.
      const now = Math.max(...sizes);
      const before = expectation.get(agent);
      expectation.set(agent, before === undefined ? now : before + WEIGHT * (now - before));
    }
  }

  /** What the launches under way still hold: what each is expected to take, less what it takes. */
  function held(running: MeasuredAgent[]): number {
    const rss = new Map(running.map((r) => [r.id, r.rssBytes]));
    let total = 0;
    for (const hold of holds) {
      const taken = hold.sessionId === null ? 0 : (rss.get(hold.sessionId) ?? 0);
      hold.owed = Math.max(0, hold.bytes - taken);
      total += hold.owed;
    }
    return total;
  }

  function drop(hold: Hold): void {
    if (holds.delete(hold)) deps.freed?.();
  }

  async function decide(agent: string): Promise<Reservation> {
    const [available, running] = await Promise.all([deps.available(), deps.running()]);
    const starting = new Set([...holds].map((h) => h.sessionId));
    // An agent still starting is not yet the size of its kind: only started ones teach it.
    learn(running.filter((r) => !starting.has(r.id)));
    if (available === null) return NO_HOLD; // no /proc: nothing to go by
    const expected = admission.expected(agent);
    const holding = held(running);
    const left = available - holding - expected;
    if (left < deps.reserveMb * MB) {
      const starts = holds.size
        ? `, ${Math.round(holding / MB)} MB of it held for ${holds.size === 1 ? "an agent" : `${holds.size} agents`} still starting`
        : "";
      throw new AgError(
        "HOST_MEMORY_LOW",
        `not enough memory for another ${agent} session: ${Math.floor(available / MB)} MB available${starts}, one more is expected to take ${Math.round(expected / MB)} MB, and ${deps.reserveMb} MB are kept free (memoryReserveMb)`,
        { retryAfterSeconds: RETRY_AFTER_SECONDS },
      );
    }
    const hold: Hold = { agent, bytes: expected, sessionId: null, owed: expected };
    holds.add(hold);
    return {
      bind(sessionId) {
        hold.sessionId = sessionId;
      },
      release: () => drop(hold),
    };
  }

  const admission: Admission = {
    expected: (agent) => expectation.get(agent) ?? DEFAULT_AGENT_BYTES,
    measured: () => Object.fromEntries(expectation),
    holding: () => [...holds].map((h) => ({ agent: h.agent, sessionId: h.sessionId, bytes: h.owed })),
    started(sessionId) {
      for (const hold of holds) if (hold.sessionId === sessionId) drop(hold);
    },
    reserve(agent) {
      if (deps.reserveMb === 0) return Promise.resolve(NO_HOLD);
      const decision = deciding.then(() => decide(agent));
      deciding = decision.catch(() => {});
      return decision;
    },
  };
  return admission;
}
