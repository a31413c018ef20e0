import type { Database } from "bun:sqlite";
import { accessSync, constants, type FSWatcher, statfsSync, statSync, watch } from "node:fs";
import { basename, dirname } from "node:path";
import type { DiagnosticsSink } from "../diagnostics/index.ts";
import { AgError } from "../shared/errors.ts";
import { schemaVersion } from "./db.ts";
import { storageFault } from "./faults.ts";

/**
 * Watches over the state database while ag runs: remembers the last write that failed for
 * storage reasons (until a probe write succeeds again: freeing space heals it, no restart), and
 * notices the file being removed or replaced under it (a watch on the state directory, and a
 * cheap stat before each write a client asks for). A replaced file makes the connection
 * query-only, so no write of any kind goes into the unlinked file; putting the same file back
 * lifts it.
 */
export interface StorageGuard {
  /**
   * Throws the fault that refuses a write now. A remembered fault is probed first (it may have
   * healed); `probe`: a write is tried even without one (an action whose record must follow).
   */
  assertWritable(probe?: boolean): void;
  /** A failure met anywhere: a storage fault is remembered (health shows it) and returned as an AgError. */
  noted(error: unknown): AgError | null;
  /** The store now, for /v1/health. */
  check(): StorageHealth;
  /** Stops watching. */
  close(): void;
}

export interface StorageHealth {
  healthy: boolean;
  /** Why not, naming the code a write is refused with. */
  error: string | null;
  code: "STORAGE_FULL" | "STORAGE_UNAVAILABLE" | "STORAGE_REPLACED" | null;
  /** Free space where the database lives (null where the file system does not say). */
  freeBytes: number | null;
  /** The database file at its path is still the one ag opened. */
  sameFile: boolean;
}

/** Below this much free space a health check tries a write instead of trusting a fault-free past. */
const LOW_SPACE_BYTES = 64 * 1024;

export function createStorageGuard(deps: {
  db: Database;
  path: string;
  logger: { warn(line: string): void; error(line: string): void; info(line: string): void };
  diagnostics?: DiagnosticsSink;
}): StorageGuard {
  const opened = identityOf(deps.path);
  /** The last storage failure, until a write succeeds again. */
  let fault: AgError | null = null;
  let replaced = false;
  let watcher: FSWatcher | null = null;
  try {
    const name = basename(deps.path);
    watcher = watch(dirname(deps.path), (event, file) => {
      if (event === "rename" && file === name) verifyFile();
    });
  } catch (error) {
    deps.logger.warn(
      `cannot watch the state directory (${(error as Error).message}): a removed database is noticed at the next write`,
    );
  }

  function verifyFile(): boolean {
    const current = identityOf(deps.path);
    const same =
      opened !== null && current !== null && current.ino === opened.ino && current.dev === opened.dev;
    if (same === !replaced) return same;
    replaced = !same;
    // Query-only: every write of this connection fails (SQLITE_READONLY) instead of going to the ghost.
    deps.db.run(`PRAGMA query_only = ${replaced ? "ON" : "OFF"}`);
    const detail = replaced
      ? `the state database ${deps.path} was ${current ? "replaced" : "removed"} while ag runs: writes are refused (STORAGE_REPLACED); restart ag to open a new one`
      : `the state database ${deps.path} is back: writes are accepted again`;
    if (replaced) deps.logger.error(detail);
    else deps.logger.info(detail);
    deps.diagnostics?.record(replaced ? "storage.replaced" : "storage.restored", detail);
    return same;
  }

  function noted(error: unknown): AgError | null {
    const mapped = storageFault(error);
    if (!mapped) return null;
    // A write refused because the file was replaced (query-only) says so, not "read-only".
    if (replaced) return replacedError();
    if (fault === null) {
      deps.logger.error(`state store fault: ${mapped.message}`);
      deps.diagnostics?.record("storage.fault", mapped.message);
    }
    fault = mapped;
    return mapped;
  }

  /** One small real write (the schema version, unchanged): does the store take writes now? */
  function probe(): void {
    try {
      deps.db.run(`PRAGMA user_version = ${schemaVersion(deps.db)}`);
      if (fault) {
        deps.logger.info("state store writable again");
        deps.diagnostics?.record("storage.healed", "state store writable again");
      }
      fault = null;
    } catch (error) {
      if (!noted(error)) throw error;
    }
  }

  function replacedError(): AgError {
    return new AgError(
      "STORAGE_REPLACED",
      "the state database was removed or replaced while ag runs: writes are refused, nothing was done; restart ag (agents still running are then listed by GET /v1/untracked)",
    );
  }

  return {
    assertWritable(always = false) {
      if (!verifyFile()) throw replacedError();
      if (fault || always) probe();
      if (fault) throw fault;
    },
    noted,
    check() {
      const sameFile = verifyFile();
      const freeBytes = freeSpace(deps.path);
      if (sameFile && (fault || (freeBytes !== null && freeBytes < LOW_SPACE_BYTES))) probe();
      const current = !sameFile ? replacedError() : fault;
      return {
        healthy: current === null,
        error: current?.message ?? null,
        code: (current?.code as StorageHealth["code"]) ?? null,
        freeBytes,
        sameFile,
      };
    },
    close() {
      watcher?.close();
      watcher = null;
    },
  };
}

/**
 * Start-up: a state directory ag cannot write to, or one with no space left, stops ag with the
 * reason (STORAGE_UNAVAILABLE / STORAGE_FULL) before it takes the directory.
 */
export function assertStateDirWritable(stateDir: string): void {
  try {
    accessSync(stateDir, constants.W_OK);
  } catch (error) {
    throw new AgError(
      "STORAGE_UNAVAILABLE",
      `the state directory ${stateDir} is not writable (${(error as NodeJS.ErrnoException).code}): ag keeps its sessions there and cannot start; fix its permissions or set SVC_STATE_DIR`,
    );
  }
  const free = freeSpace(stateDir);
  if (free === 0)
    throw new AgError(
      "STORAGE_FULL",
      `the state directory ${stateDir} is full (0 bytes free): ag keeps its sessions there and cannot start; free some space or set SVC_STATE_DIR`,
    );
}

/** Free space on the file system of `path` (or of its folder, when it is gone); null where none says. */
function freeSpace(path: string): number | null {
  for (const where of [path, dirname(path)]) {
    try {
      const fs = statfsSync(where);
      return Number(fs.bavail) * Number(fs.bsize);
    } catch {}
  }
  return null;
}

function identityOf(path: string): { dev: number; ino: number } | null {
  try {
    const stat = statSync(path);
    return { dev: stat.dev, ino: stat.ino };
  } catch {
    return null;
  }
}
