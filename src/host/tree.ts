import type { ProcessUsage } from "./procfs.ts";

/** A process and everything it started, root first, from one /proc pass (by parent pid). */
export function treeOf(processes: readonly ProcessUsage[]): (root: number) => ProcessUsage[] {
  const children = new Map<number, ProcessUsage[]>();
  for (const p of processes) {
    const siblings = children.get(p.ppid);
    if (siblings) siblings.push(p);
    else children.set(p.ppid, [p]);
  }
  const byPid = new Map(processes.map((p) => [p.pid, p]));
  return (root) => {
    const top = byPid.get(root);
    if (!top) return [];
    const tree = [top];
    for (let i = 0; i < tree.length; i++) tree.push(...(children.get(tree[i]!.pid) ?? []));
    return tree;
  };
}
