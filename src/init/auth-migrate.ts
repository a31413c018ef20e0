import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { authTokenPath, writeTokenFile } from "../config/auth-token.ts";
import { CLIENT_TOKEN_KEY } from "../config/load.ts";
import { AgError } from "../shared/errors.ts";
import { projectConfigPath, removeTopLevelKey } from "./config-file.ts";

/** "removed-empty": the key held an empty token, so there was nothing to move, only to delete. */
export type MigrateOutcome = "migrated" | "removed-empty" | "already-migrated" | "nothing-to-migrate";

export interface MigrateResult {
  outcome: MigrateOutcome;
  configFile: string;
  tokenFile: string;
}

/**
 * `ag auth migrate`: moves the project file's clientAuthToken into <stateDir>/auth-token (0600 in
 * a 0700 directory) and deletes the key, leaving the rest of the file as it was. Running it again
 * changes nothing. A token file that holds a different token is not replaced unless forced: one of
 * the two is in use somewhere, and guessing which would lock someone out.
 */
export function migrateAuthToken(options: { cwd: string; stateDir: string; force?: boolean }): MigrateResult {
  const configFile = projectConfigPath(options.cwd);
  const tokenFile = authTokenPath(options.stateDir);
  const result = (outcome: MigrateOutcome): MigrateResult => ({ outcome, configFile, tokenFile });
  const existing = existsSync(tokenFile) ? readFileSync(tokenFile, "utf8").trim() : null;

  const text = existsSync(configFile) ? readFileSync(configFile, "utf8") : null;
  const parsed = text === null ? null : parseMapping(text, configFile);
  if (!parsed || !(CLIENT_TOKEN_KEY in parsed))
    return result(existing ? "already-migrated" : "nothing-to-migrate");

  const token = parsed[CLIENT_TOKEN_KEY];
  if (typeof token !== "string") {
    throw new AgError("CONFIG_INVALID", `${CLIENT_TOKEN_KEY} in ${configFile} must be a string`);
  }
  // Work out the new file before touching anything, so a failure leaves both files as they were.
  const rewritten = withoutKey(text!, parsed, configFile);
  const value = token.trim();
  if (value && existing && existing !== value && !options.force) {
    throw new AgError(
      "CONFLICT",
      `${tokenFile} already holds a different token than ${CLIENT_TOKEN_KEY} in ${configFile}; keep the file's token by deleting the key by hand, or replace it with --force`,
    );
  }
  if (value && existing !== value) writeTokenFile(options.stateDir, value);
  writeFileSync(configFile, rewritten);
  return result(value ? "migrated" : "removed-empty");
}

function parseMapping(text: string, path: string): Record<string, unknown> | null {
  let parsed: unknown;
  try {
    parsed = Bun.YAML.parse(text);
  } catch (error) {
    throw new AgError(
      "CONFIG_INVALID",
      `cannot read ${path}: ${error instanceof Error ? error.message : error}`,
    );
  }
  return parsed !== null && typeof parsed === "object" && !Array.isArray(parsed)
    ? (parsed as Record<string, unknown>)
    : null;
}

/** The text without the key, checked by parsing it again: any other difference means "by hand". */
function withoutKey(text: string, parsed: Record<string, unknown>, path: string): string {
  const rewritten = removeTopLevelKey(text, CLIENT_TOKEN_KEY);
  const expected = { ...parsed };
  delete expected[CLIENT_TOKEN_KEY];
  const after = rewritten === null ? undefined : (parseMapping(rewritten, path) ?? {});
  if (rewritten === null || !Bun.deepEquals(after, expected)) {
    throw new AgError(
      "CONFIG_INVALID",
      `cannot remove ${CLIENT_TOKEN_KEY} from ${path} automatically (write it on one line as "${CLIENT_TOKEN_KEY}: <token>")`,
    );
  }
  return rewritten;
}
