import { readdir, readFile, readlink } from "node:fs/promises";

export interface SystemProcess {
  pid: number;
  ppid: number;
  argv: string[];
  cwd: string | null;
}

/**
 * Every process this user can see, from /proc (Linux): pid, parent, argv and working directory.
 * Processes that end while being read, or that are not ours to look into, are skipped.
 */
export async function listProcesses(procRoot = "/proc"): Promise<SystemProcess[]> {
  let entries: string[];
  try {
    entries = await readdir(procRoot);
  } catch {
    return []; // no /proc (not Linux): nothing to report
  }
  const pids = entries.filter((e) => /^\d+$/.test(e)).map(Number);
  const found = await Promise.all(pids.map((pid) => readProcess(procRoot, pid)));
  return found.filter((p): p is SystemProcess => p !== null);
}

async function readProcess(procRoot: string, pid: number): Promise<SystemProcess | null> {
  try {
    const [cmdline, stat] = await Promise.all([
      readFile(`${procRoot}/${pid}/cmdline`, "utf8"),
      readFile(`${procRoot}/${pid}/stat`, "utf8"),
    ]);
    const argv = cmdline.split("\0").filter((part, i, all) => part !== "" || i < all.length - 1);
    if (argv.length === 0) return null; // a kernel thread
    // stat: "pid (comm) state ppid …"; comm may hold spaces and parentheses.
    const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
    const cwd = await readlink(`${procRoot}/${pid}/cwd`).catch(() => null);
    return { pid, ppid, argv, cwd };
  } catch {
    return null;
  }
}
