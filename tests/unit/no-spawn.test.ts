import { expect, test } from "bun:test";
import { execFileSync, spawn } from "node:child_process";
import { createServer } from "node:net";
import { UnitSpawnError, unitSpawns } from "../helpers/no-spawn.ts";

/**
 * The guard tests/setup.ts installs for every file under tests/unit (helpers/no-spawn.ts): a
 * process or a server refused, each refusal recorded for the run's end to fail on. This test takes
 * back what it recorded: its refusals are the point.
 */
test("a unit test can start no process and open no port, through Bun or node:*", () => {
  const attempts: Array<[string, () => unknown]> = [
    ["Bun.spawn", () => Bun.spawn(["true"])],
    ["Bun.spawnSync", () => Bun.spawnSync(["true"])],
    ["Bun.serve", () => Bun.serve({ port: 0, fetch: () => new Response("") })],
    ["child_process.spawn", () => spawn("true")],
    ["child_process.execFileSync", () => execFileSync("true")],
    ["net.createServer", () => createServer()],
  ];
  const before = unitSpawns.length;
  for (const [what, attempt] of attempts) {
    expect(attempt).toThrow(UnitSpawnError);
    expect(attempt).toThrow(`${what} in a unit test`);
  }
  const recorded = unitSpawns.splice(before);
  expect(recorded).toHaveLength(attempts.length * 2);
  expect(recorded[0]).toEndWith("tests/unit/no-spawn.test.ts: Bun.spawn(true)");
});
