import { Database } from "bun:sqlite";
import { chmodSync, closeSync, existsSync, mkdirSync, openSync, statSync } from "node:fs";
import { join } from "node:path";
import { AgError } from "../shared/errors.ts";
import { MIGRATIONS, type Migration } from "./migrations.ts";

/**
 * The state directory holds secrets (auth token, hook secrets): only its owner may enter. With
 * agents under other OS users (`runAs`), they must pass through it to their own session folders:
 * it and its `sessions/` are then 0711 (entered, never listed), and every file in them is 0600.
 */
export function ensureStateDir(stateDir: string, options: { passable?: boolean } = {}): void {
  const mode = options.passable ? 0o711 : 0o700;
  for (const dir of [stateDir, join(stateDir, "sessions")]) {
    mkdirSync(dir, { recursive: true, mode });
    if ((statSync(dir).mode & 0o777) !== mode) chmodSync(dir, mode);
  }
}

export function stateDbPath(stateDir: string): string {
  return join(stateDir, "state.db");
}

/**
 * Opens (creating if needed) a database in WAL mode and brings its schema up to date. The file
 * and its -wal and -shm (SQLite gives them the database's mode) are 0600 whatever the umask.
 */
export function openDatabase(path: string, migrations: readonly Migration[] = MIGRATIONS): Database {
  if (path !== ":memory:") {
    if (!existsSync(path)) closeSync(openSync(path, "a", 0o600));
    for (const file of [path, `${path}-wal`, `${path}-shm`]) if (existsSync(file)) chmodSync(file, 0o600);
  }
  const db = new Database(path, { create: true, strict: true });
  try {
    db.run("PRAGMA journal_mode = WAL");
    db.run("PRAGMA synchronous = NORMAL");
    db.run("PRAGMA foreign_keys = ON");
    db.run("PRAGMA busy_timeout = 5000");
    migrate(db, migrations);
    return db;
  } catch (error) {
    db.close();
    throw error;
  }
}

export function schemaVersion(db: Database): number {
  return (db.query("PRAGMA user_version").get() as { user_version: number }).user_version;
}

/**
 * Applies the migrations the database has not seen, each in its own transaction, so a failure
 * leaves the database at the last good version. A database written by a newer ag is refused
 * rather than misread.
 */
export function migrate(db: Database, migrations: readonly Migration[]): void {
  const current = schemaVersion(db);
  if (current > migrations.length) {
    throw new AgError(
      "STATE_DB_TOO_NEW",
      `state database ${db.filename} has schema version ${current}, newer than this ag knows (${migrations.length}); upgrade ag`,
    );
  }
  for (let version = current + 1; version <= migrations.length; version++) {
    const migration = migrations[version - 1]!;
    db.transaction(() => {
      db.run(migration.sql);
      db.run(`PRAGMA user_version = ${version}`);
    })();
  }
}
