import { type HostMemory, readHostMemory, readProcesses, TICKS_PER_SECOND, uptimeSeconds } from "./procfs.ts";
import { treeOf } from "./tree.ts";

/** One process and everything it started, added up. */
export interface TreeUsage {
  pid: number;
  processes: number;
  rssBytes: number;
  /**
   * Share of one core the tree used since it was last measured (its whole life the first time);
   * null when the kernel gives no times.
   */
  cpuPercent: number | null;
}

export interface HostUsage {
  /** The process tree under each root pid (by the caller's key: a session id), one /proc pass. */
  trees(roots: ReadonlyMap<string, number>): Promise<Map<string, TreeUsage>>;
  memory(): Promise<HostMemory | null>;
}

/** What the agents cost and what the host has left, read from /proc when asked. */
export function createHostUsage(
  options: { procRoot?: string; cgroupRoot?: string; now?: () => number } = {},
): HostUsage {
  const now = options.now ?? Date.now;
  /** Per key: the tree's CPU ticks when last measured, to make the next measure an interval's. */
  const last = new Map<string, { root: number; ticks: number; at: number }>();

  return {
    async trees(roots) {
      const [processes, uptime] = await Promise.all([
        readProcesses(options.procRoot),
        uptimeSeconds(options.procRoot),
      ]);
      const under = treeOf(processes);
      const at = now();
      const result = new Map<string, TreeUsage>();
      for (const [key, root] of roots) {
        const members = under(root);
        const top = members[0];
        if (!top) continue;
        const ticks = members.reduce((sum, p) => sum + p.cpuTicks, 0);
        const before = last.get(key);
        const seconds =
          before && before.root === root
            ? (at - before.at) / 1000
            : uptime === null
              ? null
              : uptime - top.startTicks / TICKS_PER_SECOND;
        const used = before && before.root === root ? ticks - before.ticks : ticks;
        last.set(key, { root, ticks, at });
        result.set(key, {
          pid: root,
          processes: members.length,
          rssBytes: members.reduce((sum, p) => sum + p.rssBytes, 0),
          cpuPercent:
            seconds !== null && seconds > 0
              ? Math.round((Math.max(0, used) / TICKS_PER_SECOND / seconds) * 1000) / 10
              : null,
        });
      }
      for (const key of last.keys()) if (!roots.has(key)) last.delete(key);
      return result;
    },
    memory: () => readHostMemory({ proc: options.procRoot, cgroup: options.cgroupRoot }),
  };
}
