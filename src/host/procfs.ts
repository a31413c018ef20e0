import { readdir, readFile } from "node:fs/promises";

/**
 * What the kernel says about processes and memory (Linux /proc; elsewhere nothing). Read on
 * demand — when someone asks for health or metrics, or before a session starts — never on a
 * timer.
 */

export interface ProcessUsage {
  pid: number;
  ppid: number;
  /** Exited, waiting for its parent to reap it: nothing left to end. */
  zombie: boolean;
  /** User + system CPU time so far, in clock ticks. */
  cpuTicks: number;
  /** Start time in clock ticks since boot. */
  startTicks: number;
  /** Resident memory in bytes. */
  rssBytes: number;
}

/** Clock ticks per second (USER_HZ): 100 on every Linux ABI ag runs on. */
export const TICKS_PER_SECOND = 100;
/** Resident pages in /proc/<pid>/stat are this size on x86-64 and the usual arm64 kernels. */
const PAGE_BYTES = 4096;

/** Every process's parent, CPU time and memory (processes that vanish while read are skipped). */
export async function readProcesses(procRoot = "/proc"): Promise<ProcessUsage[]> {
  let entries: string[];
  try {
    entries = await readdir(procRoot);
  } catch {
    return [];
  }
  const pids = entries.filter((e) => /^\d+$/.test(e)).map(Number);
  const read = await Promise.all(
    pids.map((pid) =>
      readFile(`${procRoot}/${pid}/stat`, "utf8").then(
        (stat) => parseStat(pid, stat),
        () => null,
      ),
    ),
  );
  return read.filter((p): p is ProcessUsage => p !== null);
}

/** "pid (comm) state ppid … utime stime … starttime vsize rss …"; comm may hold spaces and ")". */
export function parseStat(pid: number, stat: string): ProcessUsage | null {
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  // fields[0] is field 3 (state): field n is fields[n - 3].
  const ppid = Number(fields[1]);
  const cpuTicks = Number(fields[11]) + Number(fields[12]);
  const startTicks = Number(fields[19]);
  const rssPages = Number(fields[21]);
  if (![ppid, cpuTicks, startTicks, rssPages].every(Number.isFinite)) return null;
  return { pid, ppid, zombie: fields[0] === "Z", cpuTicks, startTicks, rssBytes: rssPages * PAGE_BYTES };
}

/** Seconds since boot (/proc/uptime), or null. */
export async function uptimeSeconds(procRoot = "/proc"): Promise<number | null> {
  const text = await readFile(`${procRoot}/uptime`, "utf8").catch(() => null);
  const seconds = text ? Number(text.split(" ")[0]) : Number.NaN;
  return Number.isFinite(seconds) ? seconds : null;
}

export interface HostMemory {
  /** What the kernel says can be had without swapping (MemAvailable), in bytes. */
  availableBytes: number;
  totalBytes: number;
  /** When ag runs in a cgroup with a memory limit: the limit and what the cgroup uses now. */
  cgroup: { limitBytes: number; usedBytes: number } | null;
}

/** MemAvailable and MemTotal, and the cgroup v2 limit of this process when it has one. */
export async function readHostMemory(
  roots: { proc?: string; cgroup?: string } = {},
): Promise<HostMemory | null> {
  const proc = roots.proc ?? "/proc";
  const meminfo = await readFile(`${proc}/meminfo`, "utf8").catch(() => null);
  if (!meminfo) return null;
  const kb = (key: string) =>
    Number(meminfo.match(new RegExp(`^${key}:\\s+(\\d+) kB`, "m"))?.[1] ?? Number.NaN);
  const availableBytes = kb("MemAvailable") * 1024;
  const totalBytes = kb("MemTotal") * 1024;
  if (!Number.isFinite(availableBytes) || !Number.isFinite(totalBytes)) return null;
  return {
    availableBytes,
    totalBytes,
    cgroup: await readCgroupMemory(proc, roots.cgroup ?? "/sys/fs/cgroup"),
  };
}

/**
 * The memory limit of this process's cgroup and what the cgroup uses: v2 (`0::/path`, then
 * memory.max — "max" is no limit — and memory.current), else v1 (`N:memory:/path`, then
 * memory.limit_in_bytes — a value near 2^63 is no limit — and memory.usage_in_bytes). Null without
 * a limit.
 */
async function readCgroupMemory(proc: string, cgroupRoot: string) {
  const self = await readFile(`${proc}/self/cgroup`, "utf8").catch(() => "");
  const at = (path: string) => (path === "/" ? "" : path);
  const v1 = self.match(/^\d+:memory:(\S*)$/m)?.[1];
  const v2 = self.match(/^0::(\S*)$/m)?.[1];
  const files =
    v1 !== undefined
      ? [
          `${cgroupRoot}/memory${at(v1)}/memory.limit_in_bytes`,
          `${cgroupRoot}/memory${at(v1)}/memory.usage_in_bytes`,
        ]
      : v2 !== undefined
        ? [`${cgroupRoot}${at(v2)}/memory.max`, `${cgroupRoot}${at(v2)}/memory.current`]
        : null;
  if (!files) return null;
  const [limit, used] = await Promise.all(files.map((f) => readFile(f, "utf8").catch(() => null)));
  const limitBytes = Number(limit?.trim());
  const usedBytes = Number(used?.trim());
  if (!Number.isFinite(limitBytes) || !Number.isFinite(usedBytes) || limitBytes >= 2 ** 62) return null;
  return { limitBytes, usedBytes };
}

/** What can still be had: MemAvailable, or less when ag's cgroup limit is nearer. */
export function availableBytes(memory: HostMemory): number {
  const inCgroup = memory.cgroup ? Math.max(0, memory.cgroup.limitBytes - memory.cgroup.usedBytes) : Infinity;
  return Math.min(memory.availableBytes, inCgroup);
}
