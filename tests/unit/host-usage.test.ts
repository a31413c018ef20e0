import { expect, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { availableBytes, createHostUsage } from "../../src/host/index.ts";
import { parseStat, readHostMemory } from "../../src/host/procfs.ts";
import { tempDir } from "../helpers/temp.ts";

/** A /proc of our making: each process's stat line, the uptime, meminfo, the cgroup files. */
function fakeProc(
  processes: Array<{ pid: number; ppid: number; ticks: number; start: number; rssPages: number }>,
) {
  const root = tempDir("ag-proc-");
  for (const p of processes) {
    mkdirSync(join(root, String(p.pid)));
    // Fields 3… : state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime stime
    // cutime cstime priority nice threads itrealvalue starttime vsize rss
    const fields = [
      "S",
      p.ppid,
      0,
      0,
      0,
      0,
      0,
      0,
      0,
      0,
      0,
      p.ticks,
      0,
      0,
      0,
      20,
      0,
      1,
      0,
      p.start,
      0,
      p.rssPages,
    ];
    writeFileSync(join(root, String(p.pid), "stat"), `${p.pid} (a (weird) name) ${fields.join(" ")} 0 0\n`);
  }
  writeFileSync(join(root, "uptime"), "1000.00 1900.00\n");
  writeFileSync(
    join(root, "meminfo"),
    "MemTotal:       16000000 kB\nMemFree: 1 kB\nMemAvailable:    8000000 kB\n",
  );
  return root;
}

test("a stat line with spaces and parentheses in its name reads right; a zombie is told", () => {
  expect(parseStat(7, "7 (x) y) S 3 0 0 0 0 0 0 0 0 0 150 50 0 0 20 0 1 0 4200 0 25 0")).toEqual({
    pid: 7,
    ppid: 3,
    zombie: false,
    cpuTicks: 200,
    startTicks: 4200,
    rssBytes: 25 * 4096,
  });
  expect(parseStat(8, "8 (sleep) Z 1 0 0 0 0 0 0 0 0 0 1 1 0 0 20 0 1 0 4300 0 0 0")?.zombie).toBe(true);
});

test("a session's agent is its pane's process and everything under it; CPU over its life, then since the last look", async () => {
  const procRoot = fakeProc([
    { pid: 10, ppid: 1, ticks: 5000, start: 50_000, rssPages: 1000 }, // the agent: started at 500 s
    { pid: 11, ppid: 10, ticks: 1000, start: 60_000, rssPages: 500 }, // its child
    { pid: 12, ppid: 11, ticks: 0, start: 70_000, rssPages: 100 }, // a grandchild
    { pid: 20, ppid: 1, ticks: 99, start: 1, rssPages: 9999 }, // someone else
  ]);
  let now = 0;
  const host = createHostUsage({ procRoot, now: () => now });
  const first = await host.trees(new Map([["s1", 10]]));
  // 6000 ticks = 60 s of CPU over 500 s of life (uptime 1000 s, started at 500 s): 12 %.
  expect(first.get("s1")).toEqual({ pid: 10, processes: 3, rssBytes: 1600 * 4096, cpuPercent: 12 });
  now = 10_000;
  writeFileSync(
    join(procRoot, "10", "stat"),
    `10 (agent) S 1 0 0 0 0 0 0 0 0 0 5500 0 0 0 20 0 1 0 50000 0 1000 0\n`,
  );
  // 500 more ticks (5 s) in 10 s: 50 %.
  expect((await host.trees(new Map([["s1", 10]]))).get("s1")!.cpuPercent).toBe(50);
  expect((await host.trees(new Map([["gone", 999]]))).size).toBe(0);
});

test("the host's memory: MemAvailable, and a nearer cgroup limit (v1 and v2) counts", async () => {
  const procRoot = fakeProc([]);
  const cgroupRoot = tempDir("ag-cgroup-");
  mkdirSync(join(procRoot, "self"));
  writeFileSync(join(procRoot, "self", "cgroup"), "0::/ag.slice\n");
  mkdirSync(join(cgroupRoot, "ag.slice"));
  writeFileSync(join(cgroupRoot, "ag.slice", "memory.max"), "max\n");
  writeFileSync(join(cgroupRoot, "ag.slice", "memory.current"), "100\n");
  const unlimited = (await readHostMemory({ proc: procRoot, cgroup: cgroupRoot }))!;
  expect(unlimited).toEqual({
    availableBytes: 8_000_000 * 1024,
    totalBytes: 16_000_000 * 1024,
    cgroup: null,
  });
  writeFileSync(join(cgroupRoot, "ag.slice", "memory.max"), String(3 * 1024 ** 3));
  writeFileSync(join(cgroupRoot, "ag.slice", "memory.current"), String(1024 ** 3));
  const limited = (await readHostMemory({ proc: procRoot, cgroup: cgroupRoot }))!;
  expect(availableBytes(limited)).toBe(2 * 1024 ** 3);
  writeFileSync(join(procRoot, "self", "cgroup"), "4:memory:/box\n0::/\n");
  mkdirSync(join(cgroupRoot, "memory", "box"), { recursive: true });
  writeFileSync(join(cgroupRoot, "memory", "box", "memory.limit_in_bytes"), "9223372036854771712\n");
  writeFileSync(join(cgroupRoot, "memory", "box", "memory.usage_in_bytes"), "5\n");
  expect((await readHostMemory({ proc: procRoot, cgroup: cgroupRoot }))!.cgroup).toBeNull();
  expect(await readHostMemory({ proc: tempDir("ag-noproc-") })).toBeNull();
});
