import { describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { acquireInstanceLock, instanceFile, readLiveInstance } from "../../src/store/instance.ts";
import { tempDir } from "../helpers/temp.ts";
import { killToZombie, spawnZombie } from "../helpers/zombie.ts";

// The state directory's lock against real processes (dead, alive, a zombie); the rest of the
// lock is tested in tests/unit/store.test.ts.
describe("state directory lock", () => {
  test("a file left by a dead process is taken over", async () => {
    const dir = tempDir();
    const dead = Bun.spawn(["true"]);
    await dead.exited;
    writeFileSync(
      instanceFile(dir),
      JSON.stringify({ pid: dead.pid, version: "0", startedAt: "then", port: 1 }),
    );
    expect(readLiveInstance(dir)).toBeNull();
    const lock = acquireInstanceLock(dir, { version: "1", startedAt: "now" });
    expect(readLiveInstance(dir)?.pid).toBe(process.pid);
    lock.release();
  });

  test("a live pid of another program does not lock the directory", () => {
    const dir = tempDir();
    const other = Bun.spawn(["sleep", "5"]);
    writeFileSync(instanceFile(dir), JSON.stringify({ pid: other.pid, version: "0", startedAt: "then" }));
    const lock = acquireInstanceLock(dir, { version: "1", startedAt: "now" });
    lock.release();
    other.kill();
  });

  test("a killed process not yet reaped by its parent (a zombie) does not lock the directory", async () => {
    const dir = tempDir();
    const zombie = await spawnZombie();
    await killToZombie(zombie.pid);
    writeFileSync(instanceFile(dir), JSON.stringify({ pid: zombie.pid, version: "0", startedAt: "then" }));
    expect(readLiveInstance(dir)).toBeNull();
    acquireInstanceLock(dir, { version: "1", startedAt: "now" }).release();
    zombie.cleanup();
  });
});
