import { readdirSync, readFileSync } from "node:fs";

/** Live processes as Linux /proc shows them, for tests that count what runs. */

export interface ProcessSeen {
  pid: number;
  ppid: number;
  pgid: number;
}

function stat(pid: string): (ProcessSeen & { zombie: boolean }) | null {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, "utf8");
    const [state, ppid, pgid] = text.slice(text.lastIndexOf(")") + 2).split(" ");
    return { pid: Number(pid), ppid: Number(ppid), pgid: Number(pgid), zombie: state === "Z" };
  } catch {
    return null; // gone meanwhile
  }
}

/** Every live process (zombies left out) whose `/proc/<pid>/<file>` passes `match`. */
function processesWhere(file: "cmdline" | "environ", match: (text: string) => boolean): ProcessSeen[] {
  return readdirSync("/proc")
    .filter((entry) => /^\d+$/.test(entry))
    .flatMap((pid) => {
      try {
        if (!match(readFileSync(`/proc/${pid}/${file}`, "utf8"))) return [];
      } catch {
        return [];
      }
      const seen = stat(pid);
      return seen && !seen.zombie ? [{ pid: seen.pid, ppid: seen.ppid, pgid: seen.pgid }] : [];
    });
}

/** Live processes whose command line names `text`. */
export function processesNaming(text: string): ProcessSeen[] {
  return processesWhere("cmdline", (cmdline) => cmdline.includes(text));
}

/** Live processes whose environment holds `name=value` (an agent's, and what it started). */
export function processesWithEnv(name: string, value: string): ProcessSeen[] {
  const entry = `${name}=${value}`;
  return processesWhere("environ", (environ) => environ.split("\0").includes(entry));
}

/** Of `processes`, those whose parent is not among them: the roots of their trees. */
export function roots(processes: readonly ProcessSeen[]): ProcessSeen[] {
  const pids = new Set(processes.map((p) => p.pid));
  return processes.filter((p) => !pids.has(p.ppid));
}
