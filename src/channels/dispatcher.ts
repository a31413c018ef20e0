import { randomUUID } from "node:crypto";
import { type Static, Type } from "@sinclair/typebox";
import type { DiagnosticsSink } from "../diagnostics/index.ts";
import type { AgEvent, EventBus } from "../events/bus.ts";
import type { Clock } from "../shared/clock.ts";
import { AgError } from "../shared/errors.ts";
import type { Logger } from "../shared/log.ts";
import { inSpan, SpanStatusCode } from "../telemetry/index.ts";
import { CHANNEL_NAMES, type ChannelName, type ChannelTarget, DeliveryError } from "./channel.ts";
import type { ChannelStore, DeadLetter, PendingDelivery } from "./store.ts";

/** CONTRACT §5: 4 attempts in all, waiting 1 s, 4 s, 16 s (±20 %) between them. */
export const RETRY_DELAYS_MS = [1_000, 4_000, 16_000] as const;
/** A receiver's Retry-After is honoured up to this. */
export const MAX_RETRY_AFTER_MS = 60_000;
/** Deliveries one target may owe before the oldest are given up (a dead receiver must not grow memory). */
export const MAX_PENDING = 10_000;

export const ChannelHealth = Type.Object({
  channel: Type.String(),
  healthy: Type.Boolean({ description: "the last delivery of every target of the channel succeeded" }),
  lastSuccess: Type.Union([Type.Number(), Type.Null()], { description: "epoch ms" }),
  lastError: Type.Union([Type.String(), Type.Null()]),
  pendingCount: Type.Integer({ description: "deliveries queued or in flight" }),
});
export type ChannelHealth = Static<typeof ChannelHealth>;

export interface DispatcherDeps {
  bus: Pick<EventBus, "subscribe">;
  store: ChannelStore;
  targets: ChannelTarget[];
  clock: Clock;
  logger: Logger;
  diagnostics?: DiagnosticsSink;
  /** For the ±20 % jitter; tests pin it. */
  random?: () => number;
}

export interface Dispatcher {
  /** Resumes what the outbox still owes, then follows the bus. */
  start(): void;
  health(): ChannelHealth[];
  deadLetters(channel?: ChannelName): DeadLetter[];
  /** Queues a channel's dead letters again (for targets still configured). */
  retry(channel: ChannelName): { requeued: number; kept: number };
  clear(channel: ChannelName): { cleared: number };
  /** Resolves when nothing is queued or in flight (tests, shutdown). */
  drained(): Promise<void>;
  /**
   * Stops: in-flight tries are aborted and stay in the outbox for the next start (at least once);
   * one that succeeded all the same is recorded as delivered.
   */
  close(): Promise<void>;
}

interface TargetState {
  target: ChannelTarget;
  queue: PendingDelivery[];
  active: number;
  lastSuccess: number | null;
  lastError: string | null;
  failing: boolean;
}

/**
 * Fans bus events out to every channel target at once. Each target has its own queue and
 * workers, so a target that hangs or is down delays only itself. Every delivery is written to
 * the outbox before it is tried and leaves it when it succeeds or becomes a dead letter: a
 * crash loses nothing.
 */
export function createDispatcher(deps: DispatcherDeps): Dispatcher {
  const { store, clock, logger } = deps;
  const random = deps.random ?? Math.random;
  const states = new Map<string, TargetState>();
  for (const target of deps.targets) {
    states.set(key(target.channel, target.name), {
      target,
      queue: [],
      active: 0,
      lastSuccess: null,
      lastError: null,
      failing: false,
    });
  }
  const controllers = new Set<AbortController>();
  const waiters = new Set<() => void>();
  let unsubscribe: (() => void) | null = null;
  let closed = false;
  const idleWaiters: Array<() => void> = [];

  const now = () => new Date(clock.now()).toISOString();

  function push(state: TargetState, pending: PendingDelivery): void {
    state.queue.push(pending);
    if (state.queue.length > MAX_PENDING) {
      const dropped = state.queue.shift()!;
      const why = `given up: more than ${MAX_PENDING} deliveries queued for this target`;
      store.bury(dropped, why, now());
      state.lastError = `${state.target.name}: ${why}`;
      state.failing = true;
      deps.diagnostics?.record("channel.failure", `${state.target.channel} ${state.target.name}: ${why}`);
    }
    pump(state);
  }

  function pump(state: TargetState): void {
    const limit = state.target.concurrency ?? 1;
    while (!closed && state.active < limit && state.queue.length > 0) {
      const pending = state.queue.shift()!;
      state.active++;
      void deliver(state, pending)
        .catch((error) => logger.error(`delivery to ${state.target.channel} failed unexpectedly`, error))
        .finally(() => {
          state.active--;
          pump(state);
          if (isIdle()) for (const resolve of idleWaiters.splice(0)) resolve();
        });
    }
  }

  async function deliver(state: TargetState, pending: PendingDelivery): Promise<void> {
    const { target } = state;
    for (let attempt = pending.attempts + 1; ; attempt++) {
      if (closed) return;
      store.attempted(pending.rowId, attempt);
      const failure = await tracedTry(target, { id: pending.deliveryId, event: pending.event, attempt });
      // A try the receiver took is done even when ag is stopping meanwhile: left in the outbox, it
      // would be sent a second time at the next start.
      if (!failure) {
        store.delivered(pending.rowId);
        state.lastSuccess = clock.now();
        state.failing = false;
        return;
      }
      if (closed) return;
      state.lastError = `${target.name}: ${failure.message}`;
      state.failing = true;
      const last = attempt >= RETRY_DELAYS_MS.length + 1;
      if (!failure.retryable || last) {
        store.bury({ ...pending, attempts: attempt }, failure.message, now());
        deps.diagnostics?.record(
          "channel.failure",
          `${target.channel} ${target.name}: ${pending.event.event} given up after ${attempt} attempt(s): ${failure.message}`,
        );
        return;
      }
      await wait(delayFor(attempt, failure));
    }
  }

  function delayFor(attempt: number, failure: DeliveryError): number {
    if (failure.retryAfterMs !== undefined) return Math.min(failure.retryAfterMs, MAX_RETRY_AFTER_MS);
    const base = RETRY_DELAYS_MS[attempt - 1]!;
    return Math.round(base * (0.8 + 0.4 * random()));
  }

  /**
   * One try in its own span, `channel.<channel>.<event>`: a child of whatever published the event
   * (a request's span), and the parent of the target's outgoing request (webhooks send its traceparent).
   */
  function tracedTry(
    target: ChannelTarget,
    delivery: { id: string; event: AgEvent; attempt: number },
  ): Promise<DeliveryError | null> {
    const attributes = {
      "ag.channel": target.channel,
      "ag.channel.target": target.name,
      "ag.event": delivery.event.event,
      "ag.delivery.id": delivery.id,
      "ag.delivery.attempt": delivery.attempt,
      ...(delivery.event.session ? { "ag.session.id": delivery.event.session.id } : {}),
    };
    return inSpan(`channel.${target.channel}.${delivery.event.event}`, attributes, async (span) => {
      const failure = await tryOnce(target, delivery);
      if (failure) {
        span.setAttribute("ag.delivery.retryable", failure.retryable);
        span.setStatus({ code: SpanStatusCode.ERROR, message: failure.message });
        span.setAttribute("error.type", "DELIVERY_FAILED");
      }
      return failure;
    });
  }

  /** One try, bounded by the target's timeout whether or not it honours the abort. */
  async function tryOnce(
    target: ChannelTarget,
    delivery: { id: string; event: AgEvent; attempt: number },
  ): Promise<DeliveryError | null> {
    const controller = new AbortController();
    controllers.add(controller);
    const timedOut = Promise.withResolvers<DeliveryError>();
    const cancel = clock.setTimer(() => {
      controller.abort(new Error(`timed out after ${target.timeoutMs} ms`));
      timedOut.resolve(new DeliveryError(`timed out after ${target.timeoutMs} ms`, true));
    }, target.timeoutMs);
    try {
      const sent = target.send(delivery, controller.signal).then(
        () => null,
        (error: unknown) =>
          error instanceof DeliveryError ? error : new DeliveryError(describe(error), true),
      );
      return await Promise.race([sent, timedOut.promise]);
    } finally {
      cancel();
      controllers.delete(controller);
    }
  }

  function wait(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        waiters.delete(done);
        cancel();
        resolve();
      };
      const cancel = clock.setTimer(done, ms);
      waiters.add(done);
    });
  }

  function isIdle(): boolean {
    for (const state of states.values()) if (state.active > 0 || state.queue.length > 0) return false;
    return true;
  }

  function onEvent(event: AgEvent): void {
    for (const state of states.values()) {
      let wanted = false;
      try {
        wanted = state.target.accepts(event);
      } catch (error) {
        logger.error(`${state.target.channel} filter failed on ${event.event}`, error);
      }
      if (!wanted) continue;
      // One target's trouble (a full disk, a busy database) must not cost the others this event.
      try {
        const deliveryId = randomUUID();
        const rowId = store.enqueue(state.target.channel, state.target.name, deliveryId, event, now());
        push(state, {
          rowId,
          channel: state.target.channel,
          target: state.target.name,
          deliveryId,
          event,
          attempts: 0,
        });
      } catch (error) {
        logger.error(
          `could not queue ${event.event} for ${state.target.channel} ${state.target.name}`,
          error,
        );
        deps.diagnostics?.record(
          "channel.failure",
          `${state.target.channel} ${state.target.name}: could not queue ${event.event}`,
        );
      }
    }
  }

  return {
    start() {
      if (unsubscribe || closed) return;
      for (const pending of store.pending()) {
        const state = states.get(key(pending.channel, pending.target));
        if (state) push(state, pending);
        else store.bury(pending, "its target is no longer configured", now());
      }
      unsubscribe = deps.bus.subscribe(onEvent);
    },
    health() {
      const byChannel = new Map<string, TargetState[]>();
      for (const state of states.values()) {
        byChannel.set(state.target.channel, [...(byChannel.get(state.target.channel) ?? []), state]);
      }
      return CHANNEL_NAMES.filter((c) => byChannel.has(c)).map((channel) => {
        const all = byChannel.get(channel)!;
        const successes = all.map((s) => s.lastSuccess).filter((t): t is number => t !== null);
        return {
          channel,
          healthy: all.every((s) => !s.failing),
          lastSuccess: successes.length ? Math.max(...successes) : null,
          lastError: all.find((s) => s.failing)?.lastError ?? all.find((s) => s.lastError)?.lastError ?? null,
          pendingCount: all.reduce((sum, s) => sum + s.queue.length + s.active, 0),
        };
      });
    },
    deadLetters: (channel) => store.deadLetters(channel),
    retry(channel) {
      const targets = [...states.values()].filter((s) => s.target.channel === channel);
      if (targets.length === 0) {
        throw new AgError(
          "CONFLICT",
          `the ${channel} channel is not configured: its dead letters cannot be sent`,
        );
      }
      const requeued = store.requeue(
        channel,
        targets.map((s) => s.target.name),
        now(),
      );
      for (const pending of requeued) push(states.get(key(channel, pending.target))!, pending);
      return { requeued: requeued.length, kept: store.deadLetters(channel).length };
    },
    clear: (channel) => ({ cleared: store.clear(channel) }),
    drained: () => (isIdle() ? Promise.resolve() : new Promise<void>((resolve) => idleWaiters.push(resolve))),
    async close() {
      closed = true;
      unsubscribe?.();
      for (const controller of controllers) controller.abort(new Error("ag is stopping"));
      for (const done of [...waiters]) done();
      for (const resolve of idleWaiters.splice(0)) resolve();
      await Promise.allSettled(deps.targets.map((t) => t.close?.()));
    },
  };
}

function key(channel: string, target: string): string {
  return `${channel}\u0000${target}`;
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
