import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parseStat } from "../../host/procfs.ts";

/**
 * A headless agent must not outlive the ag that ran it unnoticed, nor run twice. Each child is
 * recorded with its session the moment it is spawned (`<sessionDir>/acp.json`: its pid and its
 * start time in clock ticks since boot, from /proc, so a pid the kernel gave to another process
 * since is never taken for it). At the next start, before the conversation is reopened, a recorded
 * child that still runs (ag was killed with SIGKILL, or died, while its stdin's end had not yet
 * reached the agent) is ended with its process group: SIGTERM, then SIGKILL.
 */

/** One child as the kernel knows it: its pid and when it started. */
export interface ChildStamp {
  pid: number;
  startTicks: number;
}

/** What ag keeps of a session's agent across its restarts. */
export interface AcpState {
  /** The ACP session id (`session/new`), which `session/load` reopens. */
  sessionId?: string;
  /** The latest child spawned for the session. */
  child?: ChildStamp;
}

export const STATE_FILE = "acp.json";

export function readState(sessionDir: string): AcpState {
  const path = join(sessionDir, STATE_FILE);
  if (!existsSync(path)) return {};
  try {
    return JSON.parse(readFileSync(path, "utf8")) as AcpState;
  } catch {
    return {};
  }
}

export function writeState(sessionDir: string, patch: AcpState): void {
  const state = { ...readState(sessionDir), ...patch };
  writeFileSync(join(sessionDir, STATE_FILE), JSON.stringify(state), { mode: 0o600 });
}

/** The process `pid` as the kernel knows it now, or null (gone, a zombie, or no /proc). */
export function stampOf(pid: number): ChildStamp | null {
  try {
    const stat = parseStat(pid, readFileSync(`/proc/${pid}/stat`, "utf8"));
    return stat && !stat.zombie ? { pid, startTicks: stat.startTicks } : null;
  } catch {
    return null;
  }
}

const signal = (target: number, name: NodeJS.Signals | 0): boolean => {
  try {
    process.kill(target, name);
    return true;
  } catch {
    return false;
  }
};

/** Whether a live process (not a zombie) is in process group `pgid` (Linux /proc). */
function groupRuns(pgid: number): boolean {
  let entries: string[];
  try {
    entries = readdirSync("/proc");
  } catch {
    return false;
  }
  return entries.some((entry) => {
    if (!/^\d+$/.test(entry)) return false;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      // Fields after the command: state, ppid, pgrp…
      const [state, , pgrp] = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      return Number(pgrp) === pgid && state !== "Z";
    } catch {
      return false;
    }
  });
}

/** Whether the recorded child's process group still has a process to end. */
function leftOf(stamp: ChildStamp): boolean {
  const now = stampOf(stamp.pid);
  // The child itself, the same process (not another one the kernel gave its pid to since).
  if (now) return now.startTicks === stamp.startTicks;
  // The child is gone but its group may live on (an adapter's agent): a pid is not given again
  // while a process group of that number exists, so a group of that number is still the child's.
  return groupRuns(stamp.pid);
}

/**
 * Ends a recorded child that still runs, with its process group (SIGTERM, SIGKILL after
 * `graceMs`). True when something was left to end.
 */
export async function reap(stamp: ChildStamp, graceMs = 2_000): Promise<boolean> {
  if (!leftOf(stamp)) return false;
  if (!signal(-stamp.pid, "SIGTERM")) signal(stamp.pid, "SIGTERM");
  for (const deadline = Date.now() + graceMs; leftOf(stamp) && Date.now() < deadline; ) await Bun.sleep(50);
  if (leftOf(stamp) && !signal(-stamp.pid, "SIGKILL")) signal(stamp.pid, "SIGKILL");
  return true;
}
