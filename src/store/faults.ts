import { AgError } from "../shared/errors.ts";

/**
 * Storage faults: what SQLite (bun:sqlite's SQLiteError, `code` = the extended result code's
 * name, e.g. "SQLITE_IOERR_WRITE") or the file system (an errno code) says when a write could not
 * reach the disk. One translation for every surface: the HTTP envelope, the CLI's exit line and
 * start-up all name the store and the reason by the same code.
 */

/** SQLite result codes (extended codes start with these) that mean the disk, not the statement. */
const SQLITE_UNAVAILABLE = ["SQLITE_IOERR", "SQLITE_READONLY", "SQLITE_CANTOPEN"];
const ERRNO_FULL = new Set(["ENOSPC", "EDQUOT"]);
const ERRNO_UNAVAILABLE = new Set(["EIO", "EROFS"]);

/** The AgError a storage failure answers as, or null when `error` is something else. */
export function storageFault(error: unknown, store = "the state store"): AgError | null {
  if (error instanceof AgError) return isStorageCode(error.code) ? error : null;
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code !== "string") return null;
  const cause = (error as Error).message;
  if (code === "SQLITE_FULL" || ERRNO_FULL.has(code))
    return new AgError(
      "STORAGE_FULL",
      `${store} is full (${code}: ${cause}): free space in ag's state directory`,
      { cause: error },
    );
  if (SQLITE_UNAVAILABLE.some((prefix) => code.startsWith(prefix)) || ERRNO_UNAVAILABLE.has(code))
    return new AgError("STORAGE_UNAVAILABLE", `${store} cannot be written (${code}: ${cause})`, {
      cause: error,
    });
  return null;
}

export function isStorageCode(code: string): boolean {
  return code === "STORAGE_FULL" || code === "STORAGE_UNAVAILABLE" || code === "STORAGE_REPLACED";
}
