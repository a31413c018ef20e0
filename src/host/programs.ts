import { readFile, readlink } from "node:fs/promises";
import { readProcesses } from "./procfs.ts";
import { treeOf } from "./tree.ts";

/** One process of a tree as a program: what it runs, where, and the PATH it was given. */
export interface RunningProgram {
  pid: number;
  /** Its command line (/proc/<pid>/cmdline), argv[0] first. */
  argv: string[];
  /** Its working directory, or null when it cannot be read (not ours, gone). */
  cwd: string | null;
  /** Its environment's PATH (as it started), or null. */
  path: string | null;
}

/**
 * The process `root` and everything under it, root first, as programs (Linux /proc; elsewhere
 * nothing). Processes that end while read, or whose files cannot be read, keep what was read.
 */
export async function programsUnder(root: number, procRoot = "/proc"): Promise<RunningProgram[]> {
  const tree = treeOf(await readProcesses(procRoot))(root).filter((p) => !p.zombie);
  return Promise.all(
    tree.map(async ({ pid }) => {
      const [cmdline, cwd, environ] = await Promise.all([
        readFile(`${procRoot}/${pid}/cmdline`, "utf8").catch(() => ""),
        readlink(`${procRoot}/${pid}/cwd`).catch(() => null),
        readFile(`${procRoot}/${pid}/environ`, "utf8").catch(() => ""),
      ]);
      const path = environ.split("\0").find((entry) => entry.startsWith("PATH="));
      return {
        pid,
        argv: cmdline.split("\0").filter((arg, i, all) => arg !== "" || i < all.length - 1),
        cwd,
        path: path ? path.slice("PATH=".length) : null,
      };
    }),
  );
}
