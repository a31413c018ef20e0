import { expect, test } from "bun:test";
import { createExits } from "../../src/sessions/exits.ts";
import { systemClock } from "../../src/shared/clock.ts";

test("a resume waits for the agent that is still exiting, and no longer than its bound", async () => {
  const exits = createExits(systemClock);
  const exiting = Bun.spawn(["sleep", "0.4"]);
  exits.ending("s1", exiting.pid);
  const started = Date.now();
  await exits.gone("s1");
  expect(exiting.exitCode).not.toBeNull();
  expect(Date.now() - started).toBeGreaterThanOrEqual(300);

  // Unknown: nothing to wait for. A process that outlives the bound: waited for that long only.
  const quick = Date.now();
  await exits.gone("unknown");
  expect(Date.now() - quick).toBeLessThan(50);
  const stubborn = Bun.spawn(["sleep", "5"]);
  exits.ending("s2", stubborn.pid);
  const bounded = Date.now();
  await exits.gone("s2", 300);
  expect(Date.now() - bounded).toBeLessThan(1_000);
  stubborn.kill();
});
