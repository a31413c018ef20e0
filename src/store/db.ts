import { Database } from "bun:sqlite";
import { chmodSync, mkdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { AgError } from "../shared/errors.ts";
import { MIGRATIONS, type Migration } from "./migrations.ts";

/** The state directory holds secrets (auth token, hook secrets): only its owner may enter. */
export function ensureStateDir(stateDir: string): void {
  mkdirSync(stateDir, { recursive: true, mode: 0o700 });
  if ((statSync(stateDir).mode & 0o077) !== 0) chmodSync(stateDir, 0o700);
}

export function stateDbPath(stateDir: string): string {
  return join(stateDir, "state.db");
}

/** Opens (creating if needed) a database in WAL mode and brings its schema up to date. */
export function openDatabase(path: string, migrations: readonly Migration[] = MIGRATIONS): Database {
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
