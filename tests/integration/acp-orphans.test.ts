import { expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { readState, reap, stampOf, writeState } from "../../src/drivers/acp/orphans.ts";
import { tempDir } from "../helpers/temp.ts";
import { until } from "../helpers/until.ts";

/**
 * What ag does at start with a headless agent an earlier ag left running (src/drivers/acp/orphans.ts):
 * real processes in their own process groups, as ag spawns its ACP children.
 */

/** Live processes (not zombies) of process group `pgid`. */
function groupMembers(pgid: number): number[] {
  return readdirSync("/proc")
    .filter((entry) => /^\d+$/.test(entry))
    .filter((pid) => {
      try {
        const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
        const [state, , pgrp] = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
        return Number(pgrp) === pgid && state !== "Z";
      } catch {
        return false;
      }
    })
    .map(Number);
}

/** A child leading its own process group, as ag's ACP children do, with a grandchild in it. */
function groupLeader(script: string) {
  return Bun.spawn(["sh", "-c", script], {
    stdin: "ignore",
    stdout: "ignore",
    stderr: "ignore",
    detached: true,
  });
}

test("a recorded child still running is ended with its whole process group", async () => {
  const child = groupLeader("sleep 60 & wait");
  await until(() => groupMembers(child.pid).length === 2);
  const stamp = stampOf(child.pid)!;
  expect(stamp.pid).toBe(child.pid);
  expect(await reap(stamp, 1_000)).toBe(true);
  await child.exited;
  await until(() => groupMembers(child.pid).length === 0);
  // Nothing is left: a second look finds nothing to end.
  expect(await reap(stamp, 1_000)).toBe(false);
});

test("a pid the kernel gave to another process since (another start time) is never signalled", async () => {
  const other = groupLeader("sleep 60");
  try {
    const stamp = stampOf(other.pid)!;
    expect(await reap({ pid: other.pid, startTicks: stamp.startTicks - 1 }, 1_000)).toBe(false);
    expect(stampOf(other.pid)).toEqual(stamp);
  } finally {
    other.kill("SIGKILL");
    await other.exited;
  }
});

test("a child that is gone while its group lives on (an adapter's agent): the group is ended", async () => {
  // It ends when its stdin closes (as an ACP agent does), leaving its own child behind.
  const child = Bun.spawn(["sh", "-c", "sleep 60 & read line"], {
    stdin: "pipe",
    stdout: "ignore",
    stderr: "ignore",
    detached: true,
  });
  await until(() => groupMembers(child.pid).length === 2);
  const stamp = stampOf(child.pid)!;
  child.stdin.end();
  await child.exited;
  await until(() => groupMembers(stamp.pid).length === 1);
  expect(await reap(stamp, 1_000)).toBe(true);
  await until(() => groupMembers(stamp.pid).length === 0);
});

test("the record of a session's agent keeps its ACP session id and its latest child", () => {
  const dir = tempDir("ag-acp-state-");
  expect(readState(dir)).toEqual({});
  writeState(dir, { child: { pid: 1, startTicks: 2 } });
  writeState(dir, { sessionId: "s-1" });
  expect(readState(dir)).toEqual({ sessionId: "s-1", child: { pid: 1, startTicks: 2 } });
  writeState(dir, { child: { pid: 3, startTicks: 4 } });
  expect(readState(dir)).toEqual({ sessionId: "s-1", child: { pid: 3, startTicks: 4 } });
});
