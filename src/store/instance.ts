import { closeSync, openSync, readFileSync, rmSync, statSync, writeFileSync, writeSync } from "node:fs";
import { join } from "node:path";
import { AgError } from "../shared/errors.ts";

/**
 * `<stateDir>/server.json`: proof that one ag owns this state directory, and where it listens.
 * Clients (ag status, ag run) read it to find a server started on a random port.
 */
export interface InstanceInfo {
  pid: number;
  version: string;
  startedAt: string;
  /** The process's start time in clock ticks since boot (/proc/<pid>/stat field 22), where known. */
  procStart?: number;
  host?: string;
  port?: number;
  baseUrl?: string;
}

export interface InstanceLock {
  readonly path: string;
  /** Records where the server listens once it is bound. */
  update(fields: Pick<InstanceInfo, "host" | "port" | "baseUrl">): void;
  release(): void;
}

export function instanceFile(stateDir: string): string {
  return join(stateDir, "server.json");
}

/**
 * Takes the state directory for this process. The file is created with O_EXCL, so two ag
 * processes starting at once cannot both win; a file left by a dead process is taken over.
 */
export function acquireInstanceLock(stateDir: string, info: Omit<InstanceInfo, "pid">): InstanceLock {
  const path = instanceFile(stateDir);
  const procStart = readProcStat(process.pid)?.startTime;
  let current: InstanceInfo = {
    pid: process.pid,
    ...info,
    ...(procStart === undefined ? {} : { procStart }),
  };
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = openSync(path, "wx", 0o600);
      writeSync(fd, JSON.stringify(current));
      closeSync(fd);
      return {
        path,
        update(fields) {
          current = { ...current, ...fields };
          writeFileSync(path, JSON.stringify(current), { mode: 0o600 });
        },
        release() {
          if (readInstanceInfo(stateDir)?.pid === process.pid) rmSync(path, { force: true });
        },
      };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
      const owner = readInstanceInfo(stateDir);
      if (owner && isAgProcess(owner.pid, owner.procStart)) {
        const where = owner.port ? `, listening on port ${owner.port}` : "";
        throw new AgError(
          "STATE_DIR_LOCKED",
          `another ag (pid ${owner.pid}${where}) is already using the state directory ${stateDir}; stop it first or set SVC_STATE_DIR`,
        );
      }
      rmSync(path, { force: true });
    }
  }
  throw new AgError("STATE_DIR_LOCKED", `could not take the state directory ${stateDir}`);
}

/** The running server of a state directory, or null when none is alive. */
export function readLiveInstance(stateDir: string): InstanceInfo | null {
  const info = readInstanceInfo(stateDir);
  return info && isAgProcess(info.pid, info.procStart) ? info : null;
}

/**
 * Asks the live server of a state directory to stop the way Ctrl+C or a service manager does:
 * SIGTERM, on which it drains requests, closes and releases this file (src/server/shutdown.ts;
 * agent windows are left running). Resolves once the file no longer names it, or the process is
 * gone; "timeout" when neither happened within `timeoutMs`. Null when no server runs here.
 */
export async function stopLiveInstance(
  stateDir: string,
  options: { timeoutMs: number },
): Promise<{ info: InstanceInfo; outcome: "stopped" | "timeout" } | null> {
  const info = readLiveInstance(stateDir);
  if (!info) return null;
  try {
    process.kill(info.pid, "SIGTERM");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ESRCH") return { info, outcome: "stopped" };
    throw new AgError(
      "FORBIDDEN",
      `not allowed to stop the ag server (pid ${info.pid}) of ${stateDir}: it runs as another user`,
    );
  }
  for (const deadline = Date.now() + options.timeoutMs; Date.now() < deadline; ) {
    if (readInstanceInfo(stateDir)?.pid !== info.pid || !isAgProcess(info.pid, info.procStart)) {
      return { info, outcome: "stopped" };
    }
    await Bun.sleep(50);
  }
  return { info, outcome: "timeout" };
}

function readInstanceInfo(stateDir: string): InstanceInfo | null {
  try {
    const info = JSON.parse(readFileSync(instanceFile(stateDir), "utf8")) as InstanceInfo;
    return Number.isInteger(info.pid) ? info : null;
  } catch {
    return null;
  }
}

/**
 * True when `pid` is alive and, where /proc tells, is the ag that wrote the file: not a zombie
 * (killed but not yet reaped by its parent), not a pid reused by another process since (its start
 * time differs from the one recorded), and running the same executable as we do.
 */
export function isAgProcess(pid: number, procStart?: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EPERM") return false;
  }
  const stat = readProcStat(pid);
  if (stat) {
    if (stat.state === "Z" || stat.state === "X") return false;
    if (procStart !== undefined && stat.startTime !== procStart) return false;
  }
  try {
    // Compared by inode: dist/svc is a hard link of dist/ag, the same program under two names.
    const theirs = statSync(`/proc/${pid}/exe`);
    const ours = statSync("/proc/self/exe");
    return theirs.ino === ours.ino && theirs.dev === ours.dev;
  } catch {
    return true;
  }
}

/** State letter and start time (clock ticks since boot) from /proc/<pid>/stat; null without /proc. */
export function readProcStat(pid: number): { state: string; startTime: number } | null {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, "utf8");
    // The command name (field 2) is in parentheses and may itself hold spaces or ')'.
    const fields = text.slice(text.lastIndexOf(")") + 2).split(" ");
    const startTime = Number(fields[19]);
    return fields[0] && Number.isFinite(startTime) ? { state: fields[0], startTime } : null;
  } catch {
    return null;
  }
}
