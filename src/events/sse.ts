import type { Clock } from "../shared/clock.ts";
import type { AgEvent, EventBus } from "./bus.ts";

/**
 * Server-Sent Events over the bus: one ReadableStream per client (CONTRACT §5).
 *
 * Each message is `id: <bus id>`, `event: <name>`, `data: <the event minus its id, as JSON>`.
 * Memory per client is bounded: encoded text enters the stream only while its queue is under
 * STREAM_BYTES (`desiredSize > 0`; Bun lowers it when the socket stops draining), the rest waits
 * as references to the bus's own event objects, and a client with more than `maxQueuedEvents`
 * waiting is dropped.
 */

export interface SseSettings {
  /** Write a `:ping` comment after this much silence (SVC_SSE_IDLE_MS). */
  idleMs: number;
  /** Close the stream after this long without an event; pings do not count (SVC_SSE_CLIENT_TIMEOUT_MS). */
  clientTimeoutMs: number;
  /** Events waiting for a client that does not read before it is dropped. */
  maxQueuedEvents?: number;
}

export interface SseOpenOptions {
  /** Only this session's events (GET /v1/sessions/:id/events); all when absent. */
  sessionId?: string;
  /** Only the events this is true of (a tenant's stream sees its own sessions' events). */
  visible?: (event: AgEvent) => boolean;
  /** The client has every event up to this id (Last-Event-ID); null = only new events. */
  lastEventId: number | null;
  /** The request's signal: when the client goes away, the stream lets go of the bus and timers. */
  signal?: AbortSignal;
}

export interface SseStreams {
  open(options: SseOpenOptions): ReadableStream<Uint8Array>;
  /** Streams open now. */
  clients(): number;
}

/** Encoded text the stream may hold before events wait outside it. */
export const STREAM_BYTES = 64 * 1024;
/** Room for a full replay of the bus's ring (1000) plus as many live events. */
export const MAX_QUEUED_EVENTS = 2_000;

/** Sent events are cut off the front of a client's queue in batches of at least this many. */
const COMPACT_AFTER = 256;

const encoder = new TextEncoder();
const CONNECTED = encoder.encode(": connected\n\n");
const PING = encoder.encode(":ping\n\n");

/** One SSE message. JSON.stringify escapes newlines, so `data` is always one line. */
export function formatEvent(event: AgEvent): string {
  const { id, ...data } = event;
  return `id: ${id}\nevent: ${event.event}\ndata: ${JSON.stringify(data)}\n\n`;
}

export interface Gap {
  reason: "evicted" | "restarted";
  lastEventId: number;
  /** The oldest event the server still holds (null: none). */
  oldestHeldId: number | null;
}

export interface ReplayPlan {
  events: AgEvent[];
  /** Events with an id up to this are never sent (the client has them). */
  floor: number;
  gap: Gap | null;
}

/**
 * What a reconnecting client is owed, from everything the ring holds. Ids restart with the
 * server, so a Last-Event-ID above the newest id is from an earlier run: everything held is
 * replayed, and the client is told it may have missed events.
 */
export function planReplay(held: AgEvent[], lastEventId: number | null): ReplayPlan {
  if (lastEventId === null) return { events: [], floor: 0, gap: null };
  const newest = held.at(-1)?.id ?? 0;
  const oldestHeldId = held[0]?.id ?? null;
  if (lastEventId > newest) {
    return { events: held, floor: 0, gap: { reason: "restarted", lastEventId, oldestHeldId } };
  }
  const evicted = oldestHeldId !== null && oldestHeldId > lastEventId + 1;
  return {
    events: held.filter((e) => e.id > lastEventId),
    floor: lastEventId,
    gap: evicted ? { reason: "evicted", lastEventId, oldestHeldId } : null,
  };
}

/** The `gap` message: no `id`, so the client's Last-Event-ID stays where its events put it. */
export function formatGap(gap: Gap, timestamp: string): string {
  const detail =
    gap.reason === "restarted"
      ? `event ${gap.lastEventId} is from an earlier run of the server; events may have been missed`
      : `events after ${gap.lastEventId} before ${gap.oldestHeldId} are no longer held`;
  const data = { event: "gap", timestamp, detail, meta: { ...gap } };
  return `event: gap\ndata: ${JSON.stringify(data)}\n\n`;
}

export function createSseStreams(deps: {
  bus: Pick<EventBus, "subscribe" | "since">;
  clock: Clock;
  settings: SseSettings;
}): SseStreams {
  // Every client sends the same bytes for an event: encode it once (kept while the event lives).
  const encoded = new WeakMap<AgEvent, Uint8Array>();
  const shared: Shared = {
    ...deps,
    maxQueued: deps.settings.maxQueuedEvents ?? MAX_QUEUED_EVENTS,
    open: new Set(),
    bytesOf(event) {
      let bytes = encoded.get(event);
      if (!bytes) {
        bytes = encoder.encode(formatEvent(event));
        encoded.set(event, bytes);
      }
      return bytes;
    },
  };
  return {
    clients: () => shared.open.size,
    open: (options) => openStream(shared, options),
  };
}

interface Shared {
  bus: Pick<EventBus, "subscribe" | "since">;
  clock: Clock;
  settings: SseSettings;
  maxQueued: number;
  /** The streams open now. */
  open: Set<object>;
  bytesOf(event: AgEvent): Uint8Array;
}

function openStream(shared: Shared, options: SseOpenOptions): ReadableStream<Uint8Array> {
  const { bus, clock, settings } = shared;
  const client = {};
  /** Events not yet in the stream: references to the bus's objects, `head` is the next to send. */
  const waiting: AgEvent[] = [];
  let head = 0;
  /** The highest id queued: anything at or below it is never sent (again). */
  let floor = 0;
  let replaying = true;
  const early: AgEvent[] = [];
  let controller!: ReadableStreamDefaultController<Uint8Array>;
  let closed = false;
  let lastWriteAt = clock.now();
  let lastEventAt = lastWriteAt;
  const cancels: Array<() => void> = [];
  const matches = (e: AgEvent) =>
    (options.sessionId === undefined || e.session?.id === options.sessionId) &&
    (options.visible === undefined || options.visible(e));

  function write(bytes: Uint8Array): void {
    controller.enqueue(bytes);
    lastWriteAt = clock.now();
  }

  /** Moves waiting events into the stream while it wants more (also the stream's `pull`). */
  function flush(): void {
    while (!closed && head < waiting.length && (controller.desiredSize ?? 0) > 0) {
      write(shared.bytesOf(waiting[head++]!));
      lastEventAt = lastWriteAt;
    }
    // Drop the sent part too when a client is never quite caught up, or it would grow forever.
    if (head === waiting.length || head >= COMPACT_AFTER) {
      waiting.splice(0, head);
      head = 0;
    }
  }

  function offer(event: AgEvent): void {
    if (closed || event.id <= floor) return;
    floor = event.id;
    waiting.push(event);
    if (waiting.length - head > shared.maxQueued) finish("drop");
    else flush();
  }

  /** Idempotent: every way out (client gone, timeout, slow client) lets go of everything. */
  function finish(how: "cancelled" | "aborted" | "timeout" | "drop"): void {
    if (closed) return;
    closed = true;
    for (const cancel of cancels) cancel();
    shared.open.delete(client);
    waiting.length = 0;
    if (how === "cancelled") return;
    if (how === "aborted") {
      // The request is over; its reader may already have cancelled the stream.
      try {
        controller.close();
      } catch {}
    } else if (how === "timeout" && controller.desiredSize === STREAM_BYTES) {
      controller.close();
    } else {
      // A slow client, or unread text at a timeout (a client that stopped reading). A reason-less
      // error resets the connection and frees the queue; Bun prints any reason as an unhandled
      // error, and a slow client is expected, not a fault.
      controller.error(undefined);
    }
  }

  /** Timers compare against the last write or event instead of re-arming on each one. */
  function every(ms: number, since: () => number, fire: () => void): void {
    let cancel = () => {};
    const arm = (delay: number) => {
      cancel = clock.setTimer(check, delay);
    };
    const check = () => {
      const quiet = clock.now() - since();
      if (quiet < ms) arm(ms - quiet);
      else {
        fire();
        if (!closed) arm(ms);
      }
    };
    arm(ms);
    cancels.push(() => cancel());
  }

  function start(c: ReadableStreamDefaultController<Uint8Array>): void {
    controller = c;
    shared.open.add(client);
    write(CONNECTED);
    // Subscribe first and hold what arrives, then replay, then drain what was held: an event
    // published in between is neither lost nor (thanks to the floor) sent twice.
    cancels.push(
      bus.subscribe((event) => {
        if (!matches(event)) return;
        if (replaying) early.push(event);
        else offer(event);
      }),
    );
    const plan = planReplay(bus.since(0), options.lastEventId);
    floor = plan.floor;
    if (plan.gap) write(encoder.encode(formatGap(plan.gap, new Date(clock.now()).toISOString())));
    for (const event of plan.events) if (matches(event)) offer(event);
    replaying = false;
    for (const event of early.splice(0)) offer(event);
    every(
      settings.idleMs,
      () => lastWriteAt,
      () => write(PING),
    );
    every(
      settings.clientTimeoutMs,
      () => lastEventAt,
      () => finish("timeout"),
    );
    follow(options.signal);
  }

  function follow(signal: AbortSignal | undefined): void {
    if (!signal) return;
    if (signal.aborted) {
      finish("aborted");
      return;
    }
    const onAbort = () => finish("aborted");
    signal.addEventListener("abort", onAbort, { once: true });
    cancels.push(() => signal.removeEventListener("abort", onAbort));
  }

  return new ReadableStream<Uint8Array>(
    { start, pull: flush, cancel: () => finish("cancelled") },
    { highWaterMark: STREAM_BYTES, size: (chunk) => chunk?.byteLength ?? 0 },
  );
}
