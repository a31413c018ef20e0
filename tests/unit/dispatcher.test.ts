import { Database } from "bun:sqlite";
import { describe, expect, test } from "bun:test";
import {
  type ChannelName,
  type ChannelTarget,
  createChannelStore,
  createDispatcher,
  type Delivery,
  DeliveryError,
} from "../../src/channels/index.ts";
import { createEventBus } from "../../src/events/bus.ts";
import type { EventName } from "../../src/events/names.ts";
import { createLogger } from "../../src/shared/log.ts";
import { migrate } from "../../src/store/db.ts";
import { MIGRATIONS } from "../../src/store/migrations.ts";
import { createManualClock } from "../fakes/clock.ts";
import { SAMPLE_PAYLOADS, sampleInput } from "../helpers/events.ts";

type Behaviour = (delivery: Delivery, signal: AbortSignal) => Promise<void>;

/** A target whose answers the test scripts; it records every try. */
function scripted(
  channel: ChannelName,
  name: string,
  behaviour: Behaviour,
  extra: Partial<ChannelTarget> = {},
) {
  const tries: Delivery[] = [];
  const target: ChannelTarget = {
    channel,
    name,
    timeoutMs: 5_000,
    accepts: () => true,
    send(delivery, signal) {
      tries.push({ ...delivery });
      return behaviour(delivery, signal);
    },
    ...extra,
  };
  return { target, tries };
}

function world(targets: ChannelTarget[], db = freshDb()) {
  const clock = createManualClock();
  const bus = createEventBus();
  const store = createChannelStore(db);
  const dispatcher = createDispatcher({
    bus,
    store,
    targets,
    clock,
    logger: createLogger({ level: "silent", json: true }),
    random: () => 0.5, // no jitter: exactly 1 s, 4 s, 16 s
  });
  dispatcher.start();
  const publish = (event: EventName = "session.created") =>
    bus.publish(sampleInput(event, { session: { id: "s1", name: "one", workDir: "/w" }, detail: "d" }));
  return { clock, bus, store, dispatcher, publish, db };
}

function freshDb() {
  const db = new Database(":memory:", { strict: true });
  migrate(db, MIGRATIONS);
  return db;
}

/** Lets pending promise callbacks run (the manual clock fires timers synchronously). */
const settle = () => new Promise((resolve) => setTimeout(resolve, 0));

async function advance(clock: ReturnType<typeof createManualClock>, ms: number) {
  await settle();
  clock.advance(ms);
  await settle();
}

describe("the dispatcher", () => {
  test("a delivery that succeeds leaves the outbox; health says so", async () => {
    const ok = scripted("webhook", "a", async () => {});
    const w = world([ok.target]);
    w.publish();
    await w.dispatcher.drained();
    expect(ok.tries).toHaveLength(1);
    expect(w.store.pending()).toEqual([]);
    expect(w.dispatcher.health()).toEqual([
      { channel: "webhook", healthy: true, lastSuccess: w.clock.now(), lastError: null, pendingCount: 0 },
    ]);
  });

  test("retries after 1 s, 4 s, 16 s, then a dead letter with the same delivery id", async () => {
    const down = scripted("webhook", "down", async () => {
      throw new DeliveryError("HTTP 503", true);
    });
    const w = world([down.target]);
    w.publish();
    await settle();
    expect(down.tries.map((t) => t.attempt)).toEqual([1]);
    await advance(w.clock, 999);
    expect(down.tries).toHaveLength(1);
    await advance(w.clock, 1);
    expect(down.tries).toHaveLength(2);
    await advance(w.clock, 4_000);
    expect(down.tries).toHaveLength(3);
    await advance(w.clock, 16_000);
    expect(down.tries.map((t) => t.attempt)).toEqual([1, 2, 3, 4]);
    await w.dispatcher.drained();
    expect(new Set(down.tries.map((t) => t.id)).size).toBe(1);
    const [letter] = w.dispatcher.deadLetters("webhook");
    expect(letter).toMatchObject({
      channel: "webhook",
      target: "down",
      deliveryId: down.tries[0]!.id,
      attempts: 4,
      lastError: "HTTP 503",
      event: { event: "session.created", session: { id: "s1" } },
    });
    expect(w.store.pending()).toEqual([]);
    expect(w.dispatcher.health()[0]).toMatchObject({ healthy: false, lastError: "down: HTTP 503" });
  });

  test("jitter stays within ±20 %", async () => {
    const down = scripted("webhook", "j", async () => {
      throw new DeliveryError("HTTP 500", true);
    });
    const clock = createManualClock();
    const bus = createEventBus();
    const dispatcher = createDispatcher({
      bus,
      store: createChannelStore(freshDb()),
      targets: [down.target],
      clock,
      logger: createLogger({ level: "silent", json: true }),
      random: () => 0, // the shortest wait: 0.8 s
    });
    dispatcher.start();
    bus.publish(sampleInput("session.created"));
    await advance(clock, 799);
    expect(down.tries).toHaveLength(1);
    await advance(clock, 1);
    expect(down.tries).toHaveLength(2);
    await dispatcher.close();
  });

  test("a non-retryable failure (a 4xx) is a dead letter at once", async () => {
    const gone = scripted("webhook", "gone", async () => {
      throw new DeliveryError("HTTP 404", false);
    });
    const w = world([gone.target]);
    w.publish();
    await w.dispatcher.drained();
    expect(gone.tries).toHaveLength(1);
    expect(w.dispatcher.deadLetters()).toHaveLength(1);
  });

  test("Retry-After is honoured, up to 60 s", async () => {
    let first = true;
    const limited = scripted("webhook", "limited", async () => {
      if (first) {
        first = false;
        throw new DeliveryError("HTTP 429", true, 3_600_000);
      }
    });
    const w = world([limited.target]);
    w.publish();
    await advance(w.clock, 59_999);
    expect(limited.tries).toHaveLength(1);
    await advance(w.clock, 1);
    await w.dispatcher.drained();
    expect(limited.tries).toHaveLength(2);
    expect(w.dispatcher.deadLetters()).toEqual([]);
  });

  test("a target that hangs is timed out, and never delays another target", async () => {
    const hang = scripted("teamchat", "hang", () => new Promise(() => {}), { timeoutMs: 5_000 });
    const fast = scripted("webhook", "fast", async () => {});
    const w = world([hang.target, fast.target]);
    for (let i = 0; i < 3; i++) w.publish();
    await settle();
    expect(fast.tries).toHaveLength(3);
    expect(w.dispatcher.health().find((h) => h.channel === "teamchat")!.pendingCount).toBe(3);
    await advance(w.clock, 5_000); // the first try times out → retry in 1 s
    expect(w.dispatcher.health().find((h) => h.channel === "teamchat")!.lastError).toBe(
      "hang: timed out after 5000 ms",
    );
    await w.dispatcher.close();
  });

  test("the abort signal reaches the target when its try times out", async () => {
    let aborted: unknown = null;
    const slow = scripted(
      "email",
      "smtp",
      (_, signal) =>
        new Promise((_, reject) => {
          signal.addEventListener("abort", () => {
            aborted = signal.reason;
            reject(signal.reason);
          });
        }),
      { timeoutMs: 100 },
    );
    const w = world([slow.target]);
    w.publish();
    await advance(w.clock, 100);
    expect(String(aborted)).toContain("timed out after 100 ms");
    await w.dispatcher.close();
  });

  test("filters: a target gets only what it accepts", async () => {
    const some = scripted("webhook", "some", async () => {}, { accepts: (e) => e.event === "session.ended" });
    const w = world([some.target]);
    w.publish("session.created");
    w.publish("session.ended");
    await w.dispatcher.drained();
    expect(some.tries.map((t) => t.event.event)).toEqual(["session.ended"]);
  });

  test("what is owed survives a crash: a new dispatcher on the same database resumes it", async () => {
    const db = freshDb();
    const down = scripted("webhook", "hook", async () => {
      throw new DeliveryError("refused", true);
    });
    const before = world([down.target], db);
    before.publish();
    await settle();
    expect(down.tries).toHaveLength(1);
    // The process dies mid-backoff: nothing is closed, nothing more happens.
    const up = scripted("webhook", "hook", async () => {});
    const after = world([up.target], db);
    await after.dispatcher.drained();
    expect(up.tries).toHaveLength(1);
    expect(up.tries[0]).toMatchObject({ id: down.tries[0]!.id, attempt: 2 });
    expect(after.store.pending()).toEqual([]);
    await before.dispatcher.close();
  });

  test("a try that succeeds while the dispatcher closes is delivered: the next start does not send it again", async () => {
    const db = freshDb();
    const answer = Promise.withResolvers<void>();
    // A receiver that took the message and answers as ag stops (it does not heed the abort).
    const taking = scripted("chat", "bot", () => answer.promise);
    const before = world([taking.target], db);
    before.publish();
    await settle();
    expect(taking.tries).toHaveLength(1);
    const closing = before.dispatcher.close();
    answer.resolve();
    await closing;
    await settle();
    expect(before.store.pending()).toEqual([]);
    const again = scripted("chat", "bot", async () => {});
    const after = world([again.target], db);
    await after.dispatcher.drained();
    expect(again.tries).toEqual([]);
  });

  test("a try aborted by close stays owed and is sent at the next start", async () => {
    const db = freshDb();
    const heeding = scripted(
      "chat",
      "bot",
      (_, signal) =>
        new Promise((_, reject) => signal.addEventListener("abort", () => reject(signal.reason))),
    );
    const before = world([heeding.target], db);
    before.publish();
    await settle();
    await before.dispatcher.close();
    await settle();
    expect(before.store.pending()).toHaveLength(1);
    const again = scripted("chat", "bot", async () => {});
    const after = world([again.target], db);
    await after.dispatcher.drained();
    expect(again.tries).toHaveLength(1);
    expect(again.tries[0]!.id).toBe(heeding.tries[0]!.id);
  });

  test("an owed delivery whose target is gone from the config becomes a dead letter", async () => {
    const db = freshDb();
    const store = createChannelStore(db);
    store.enqueue(
      "webhook",
      "removed",
      "d-1",
      {
        id: 1,
        event: "session.created",
        timestamp: "t",
        detail: "",
        meta: SAMPLE_PAYLOADS["session.created"],
      },
      "t",
    );
    const w = world([], db);
    expect(w.dispatcher.deadLetters()).toMatchObject([
      { target: "removed", lastError: "its target is no longer configured" },
    ]);
  });

  test("dead letters are bounded per channel (100 webhook, 50 email): the oldest go", async () => {
    const hook = scripted("webhook", "h", async () => {
      throw new DeliveryError("HTTP 400", false);
    });
    const mail = scripted("email", "m", async () => {
      throw new DeliveryError("550", false);
    });
    const w = world([hook.target, mail.target]);
    for (let i = 0; i < 120; i++) w.publish();
    await w.dispatcher.drained();
    const webhook = w.dispatcher.deadLetters("webhook");
    expect(webhook).toHaveLength(100);
    expect(webhook[0]!.event.id).toBe(21);
    expect(w.dispatcher.deadLetters("email")).toHaveLength(50);
  });

  test("retry queues a channel's dead letters again with their delivery ids; clear drops them", async () => {
    let up = false;
    const hook = scripted("webhook", "h", async () => {
      if (!up) throw new DeliveryError("HTTP 400", false);
    });
    const mail = scripted("email", "m", async () => {
      throw new DeliveryError("550", false);
    });
    const w = world([hook.target, mail.target]);
    w.publish();
    w.publish();
    await w.dispatcher.drained();
    const ids = w.dispatcher.deadLetters("webhook").map((l) => l.deliveryId);
    up = true;
    expect(w.dispatcher.retry("webhook")).toEqual({ requeued: 2, kept: 0 });
    await w.dispatcher.drained();
    expect(hook.tries.slice(-2).map((t) => [t.id, t.attempt])).toEqual(ids.map((id) => [id, 1]));
    expect(w.dispatcher.deadLetters("webhook")).toEqual([]);
    expect(w.dispatcher.deadLetters("email")).toHaveLength(2);
    expect(w.dispatcher.clear("email")).toEqual({ cleared: 2 });
    expect(w.dispatcher.deadLetters()).toEqual([]);
    expect(() => w.dispatcher.retry("chat")).toThrow(expect.objectContaining({ code: "CONFLICT" }));
  });
});
