import { expect, test } from "bun:test";
import { createCheckpointRepo, createCheckpoints } from "../../src/checkpoints/index.ts";
import { createEventBus } from "../../src/events/bus.ts";
import type { SessionRecord } from "../../src/sessions/index.ts";
import { createLogger } from "../../src/shared/log.ts";
import { openDatabase } from "../../src/store/db.ts";
import { createManualClock } from "../fakes/clock.ts";
import { sampleInput } from "../helpers/events.ts";

const logger = createLogger({ level: "silent", json: false });
const settings = { enabled: false, maxFileMb: 10, keepTurns: 100, keepDays: 30, keepWhenDeleted: false };

test("checkpoints off: a prompt and a turn's end take none (no git runs: this file may spawn nothing)", async () => {
  const bus = createEventBus({ logger });
  const db = openDatabase(":memory:");
  const checkpoints = createCheckpoints({
    db,
    stateDir: "/nonexistent-state",
    settings,
    tenantWorkdirs: {},
    clock: createManualClock(),
    logger,
  });
  const stop = checkpoints.start(
    bus,
    () => ({ id: "s", workDir: "/nonexistent", tenantId: null }) as SessionRecord,
  );
  await checkpoints.beforePrompt({ id: "s", workDir: "/nonexistent", tenantId: null } as SessionRecord, "hi");
  bus.publish(
    sampleInput("session.turn_ended", { session: { id: "s", name: "s", workDir: "/nonexistent" } }),
  );
  stop();
  expect(createCheckpointRepo(db).list("s")).toEqual([]);
});

test("a deleted session's checkpoints are kept when keepWhenDeleted says so (nothing is looked up)", async () => {
  const checkpoints = createCheckpoints({
    db: openDatabase(":memory:"),
    stateDir: "/nonexistent-state",
    settings: { ...settings, enabled: true, keepWhenDeleted: true },
    tenantWorkdirs: {},
    clock: createManualClock(),
    logger,
  });
  let asked = 0;
  await checkpoints.sweep(() => {
    asked++;
    return false;
  });
  expect(asked).toBe(0);
});
