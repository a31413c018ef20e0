import { readProcesses } from "./procfs.ts";
import { treeOf } from "./tree.ts";

/** One process as it was seen: a pid the kernel reuses is told apart by its start time. */
export interface ProcessMark {
  pid: number;
  startTicks: number;
}

/**
 * What a killed session's agent leaves behind. Closing its window hangs up the processes of the
 * pane's session, but an agent may start commands in sessions of their own (Claude Code runs
 * each Bash command under `setsid`): they outlive the agent, re-parented to init, holding their
 * memory and ports. So the tree is marked before the window closes and, once the agent is gone,
 * whatever of it is still the same process is ended: SIGTERM, then SIGKILL after a grace.
 */
export interface StrayReaper {
  /** The process `root` and everything under it now (empty without /proc). */
  mark(root: number): Promise<ProcessMark[]>;
  /** Ends the marked processes still alive as themselves; resolves with how many it signalled. */
  end(marks: readonly ProcessMark[]): Promise<number>;
}

export function createStrayReaper(
  options: { procRoot?: string; graceMs?: number; kill?: (pid: number, signal: NodeJS.Signals) => void } = {},
): StrayReaper {
  const graceMs = options.graceMs ?? 3000;
  const kill = options.kill ?? ((pid, signal) => process.kill(pid, signal));
  const alive = async (marks: readonly ProcessMark[]) => {
    const processes = await readProcesses(options.procRoot);
    const now = new Map(processes.filter((p) => !p.zombie).map((p) => [p.pid, p.startTicks]));
    return marks.filter((m) => now.get(m.pid) === m.startTicks);
  };
  const signal = (marks: readonly ProcessMark[], name: NodeJS.Signals) => {
    for (const m of marks) {
      try {
        kill(m.pid, name);
      } catch {
        // gone in between, or not ours to signal: nothing to do
      }
    }
  };
  return {
    async mark(root) {
      const tree = treeOf(await readProcesses(options.procRoot))(root);
      return tree.map(({ pid, startTicks }) => ({ pid, startTicks }));
    },
    async end(marks) {
      const left = await alive(marks);
      if (left.length === 0) return 0;
      signal(left, "SIGTERM");
      await Bun.sleep(graceMs);
      signal(await alive(left), "SIGKILL");
      return left.length;
    },
  };
}
