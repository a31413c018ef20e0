import { randomBytes } from "node:crypto";
import {
  existsSync,
  linkSync,
  mkdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";

/**
 * The canonical auth-token file, `<stateDir>/auth-token` (CONTRACT §1): one line, mode 0600, in
 * the 0700 state directory. The config loader reads it when no other source sets a token, so the
 * server and every CLI command on this machine agree on the token without it being anywhere else.
 * It holds either a token the user put there (`ag auth migrate`) or one ag generated itself
 * because none was configured (prefix `agt_`, see isGeneratedToken).
 */

export const AUTH_TOKEN_FILE = "auth-token";

/** A token ag made for itself starts so; nothing a user chooses is read as one unless it does. */
const GENERATED_PREFIX = "agt_";

export function authTokenPath(stateDir: string): string {
  return join(stateDir, AUTH_TOKEN_FILE);
}

/** The token in the file ("" when there is none), and whether other users may read it. */
export function readTokenFile(path: string): { token: string; openToOthers: boolean } {
  if (!existsSync(path)) return { token: "", openToOthers: false };
  return {
    token: readFileSync(path, "utf8").trim(),
    openToOthers: (statSync(path).mode & 0o077) !== 0,
  };
}

/** Whether ag generated this token (no token was configured) rather than a user choosing it. */
export function isGeneratedToken(token: string): boolean {
  return token.startsWith(GENERATED_PREFIX);
}

/** Written beside the target and renamed over it: a reader never sees half a token. */
export function writeTokenFile(stateDir: string, token: string): void {
  replaceTokenFile(stateDir, token, "replace");
}

/**
 * The token ag generated in the state directory: the one already there (kept across restarts),
 * else a new one of 256 random bits, created 0600 (never readable by others, not even for a
 * moment). Two processes racing both end with the same file: the second one's link fails and
 * it reads the first one's.
 */
export function generatedToken(stateDir: string): { token: string; path: string; created: boolean } {
  const path = authTokenPath(stateDir);
  const existing = readTokenFile(path).token;
  if (existing) return { token: existing, path, created: false };
  const token = GENERATED_PREFIX + randomBytes(32).toString("base64url");
  const created = replaceTokenFile(stateDir, token, "create");
  return created ? { token, path, created } : { token: readTokenFile(path).token, path, created };
}

/** `create` never replaces a file (false when one is there); `replace` always does, atomically. */
function replaceTokenFile(stateDir: string, token: string, how: "create" | "replace"): boolean {
  // Made 0700 if missing; an existing state folder keeps its mode (0711 when a tenant has runAs:
  // its users pass through it to their session folders).
  mkdirSync(stateDir, { recursive: true, mode: 0o700 });
  const path = authTokenPath(stateDir);
  const scratch = `${path}.${process.pid}.tmp`;
  rmSync(scratch, { force: true });
  // The mode applies at creation, before the secret is written (a umask can only narrow it).
  writeFileSync(scratch, `${token}\n`, { mode: 0o600, flag: "wx" });
  if (how === "replace") {
    renameSync(scratch, path);
    return true;
  }
  try {
    linkSync(scratch, path);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "EEXIST") return false;
    throw error;
  } finally {
    rmSync(scratch, { force: true });
  }
}
