import { Database } from "bun:sqlite";
import { expect, test } from "bun:test";
import { type AgEvent, createEventBus } from "../../src/events/bus.ts";
import { createSessionRepo } from "../../src/sessions/index.ts";
import { createLiveStats } from "../../src/sessions/live/stats.ts";
import { initialStatus } from "../../src/sessions/live/status.ts";
import { createStatusWriter } from "../../src/sessions/live/writer.ts";
import { systemClock } from "../../src/shared/clock.ts";
import { createLogger } from "../../src/shared/log.ts";
import { migrate } from "../../src/store/db.ts";
import { MIGRATIONS } from "../../src/store/migrations.ts";
import { sampleSession } from "../helpers/app.ts";

/** A writer over a real (in-memory) session table; `gate` is what a turn's end waits for. */
function writerWith(gate: () => Promise<void> | null) {
  const db = new Database(":memory:", { strict: true });
  migrate(db, MIGRATIONS);
  const repo = createSessionRepo(db);
  let record = sampleSession({ status: "idle" });
  repo.insert(record);
  const logger = createLogger({ level: "silent", json: true });
  const bus = createEventBus({ logger });
  const told: string[] = [];
  bus.subscribe((event: AgEvent) => told.push(event.event));
  const now = systemClock.now();
  const writer = createStatusWriter(
    {
      record: () => record,
      saved: (next) => {
        record = next;
      },
      repo,
      bus,
      clock: systemClock,
      logger,
      stats: createLiveStats(now),
      beforeTurnEnd: gate,
    },
    initialStatus(now, 60_000, "idle"),
  );
  return { writer, repo, told, id: record.id };
}

const prompt = (text: string) => ({ kind: "prompt-submitted" as const, text });
const END = { kind: "turn-ended" as const };

test("a turn's end is told once what it waits for is done; later events queue behind it, the state does not", async () => {
  let release!: () => void;
  const { writer, repo, told, id } = writerWith(() => new Promise<void>((resolve) => (release = resolve)));
  writer.apply(prompt("one"), "hook", systemClock.now());
  expect(told).toEqual(["session.working", "status.working"]);

  writer.apply(END, "hook", systemClock.now());
  // Saved at once (GET answers idle), told later.
  expect(repo.get(id)?.status).toBe("idle");
  writer.apply(prompt("two"), "hook", systemClock.now());
  expect(repo.get(id)?.status).toBe("working");
  await Bun.sleep(0);
  expect(told).toHaveLength(2);

  release();
  await Bun.sleep(0);
  expect(told.slice(2)).toEqual([
    "session.idle",
    "status.idle",
    "session.turn_ended",
    "session.working",
    "status.working",
  ]);
});

test("with nothing to wait for (no transcript), a turn's end is told at once", () => {
  const { writer, told } = writerWith(() => null);
  writer.apply(prompt("one"), "hook", systemClock.now());
  writer.apply(END, "hook", systemClock.now());
  expect(told).toEqual([
    "session.working",
    "status.working",
    "session.idle",
    "status.idle",
    "session.turn_ended",
  ]);
});

test("a wait that fails still tells the turn's end", async () => {
  const { writer, told } = writerWith(() => Promise.reject(new Error("transcript gone")));
  writer.apply(prompt("one"), "hook", systemClock.now());
  writer.apply(END, "hook", systemClock.now());
  for (let i = 0; i < 10 && !told.includes("session.turn_ended"); i++) await Bun.sleep(0);
  expect(told.at(-1)).toBe("session.turn_ended");
});
