import { Database } from "bun:sqlite";
import { describe, expect, test } from "bun:test";
import { statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { AgError } from "../../src/shared/errors.ts";
import { ensureStateDir, migrate, openDatabase, schemaVersion } from "../../src/store/db.ts";
import {
  acquireInstanceLock,
  instanceFile,
  readLiveInstance,
  readProcStat,
} from "../../src/store/instance.ts";
import { MIGRATIONS } from "../../src/store/migrations.ts";
import { tempDir } from "../helpers/temp.ts";

describe("state database", () => {
  test("opens in WAL mode at the latest schema", () => {
    const db = openDatabase(join(tempDir(), "state.db"));
    expect((db.query("PRAGMA journal_mode").get() as { journal_mode: string }).journal_mode).toBe("wal");
    expect(schemaVersion(db)).toBe(MIGRATIONS.length);
    expect(db.query("SELECT name FROM sqlite_master WHERE name = 'sessions'").get()).toBeTruthy();
    db.close();
  });

  test("reopening applies nothing twice and keeps the data", () => {
    const path = join(tempDir(), "state.db");
    const first = openDatabase(path);
    first.run("CREATE TABLE marker (x)");
    first.run("INSERT INTO marker VALUES (1)");
    first.close();
    const second = openDatabase(path);
    expect(second.query("SELECT x FROM marker").all()).toEqual([{ x: 1 }]);
    second.close();
  });

  test("new migrations are applied in order on an older database", () => {
    const db = new Database(":memory:");
    const steps = [
      { name: "a", sql: "CREATE TABLE a (x)" },
      { name: "b", sql: "ALTER TABLE a ADD COLUMN y" },
    ];
    migrate(db, steps.slice(0, 1));
    expect(schemaVersion(db)).toBe(1);
    migrate(db, steps);
    expect(schemaVersion(db)).toBe(2);
    expect(db.query("SELECT name FROM pragma_table_info('a')").all()).toEqual([{ name: "x" }, { name: "y" }]);
  });

  test("keys made for a session before keys were bound to sessions are bound to it by their name", () => {
    const db = new Database(":memory:");
    const at = MIGRATIONS.findIndex((m) => m.name === "session keys bound to their session");
    migrate(db, MIGRATIONS.slice(0, at));
    const id = "0b7e4c2a-9d1f-4e35-8a6b-2c3d4e5f6a7b";
    const insert = db.query(
      "INSERT INTO api_keys (id, name, prefix, hash, scopes, created_at) VALUES (?, ?, 'agk_x', ?, '[]', '2026-01-01')",
    );
    insert.run("k1", `session ${id} (ag mcp)`, "h1");
    insert.run("k2", "ci", "h2");
    migrate(db, MIGRATIONS);
    expect(db.query("SELECT id, session_id FROM api_keys ORDER BY id").all()).toEqual([
      { id: "k1", session_id: id },
      { id: "k2", session_id: null },
    ]);
  });

  test("a failing migration leaves the last good version and its data intact", () => {
    const db = new Database(":memory:");
    migrate(db, [{ name: "a", sql: "CREATE TABLE a (x); INSERT INTO a VALUES (1);" }]);
    const broken = [
      { name: "a", sql: "CREATE TABLE a (x); INSERT INTO a VALUES (1);" },
      { name: "b", sql: "CREATE TABLE b (x); INSERT INTO nope VALUES (1);" },
    ];
    expect(() => migrate(db, broken)).toThrow();
    expect(schemaVersion(db)).toBe(1);
    expect(db.query("SELECT name FROM sqlite_master WHERE name = 'b'").get()).toBeNull();
    expect(db.query("SELECT x FROM a").all()).toEqual([{ x: 1 }]);
  });

  test("a database written by a newer ag is refused, not misread", () => {
    const path = join(tempDir(), "state.db");
    const db = new Database(path);
    db.run(`PRAGMA user_version = ${MIGRATIONS.length + 5}`);
    db.close();
    try {
      openDatabase(path);
      throw new Error("expected a refusal");
    } catch (error) {
      expect((error as AgError).code).toBe("STATE_DB_TOO_NEW");
    }
  });

  test("the state directory is created private (0700) and tightened if it was not", () => {
    const dir = join(tempDir(), "nested", "state");
    ensureStateDir(dir);
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    const loose = tempDir();
    ensureStateDir(loose);
    expect(statSync(loose).mode & 0o777).toBe(0o700);
  });
});

describe("state directory lock", () => {
  test("one owner at a time, with a message naming the owner", () => {
    const dir = tempDir();
    const lock = acquireInstanceLock(dir, { version: "1", startedAt: "now" });
    lock.update({ host: "127.0.0.1", port: 9555, baseUrl: "http://127.0.0.1:9555" });
    try {
      acquireInstanceLock(dir, { version: "1", startedAt: "now" });
      throw new Error("expected STATE_DIR_LOCKED");
    } catch (error) {
      expect(error).toBeInstanceOf(AgError);
      expect((error as AgError).code).toBe("STATE_DIR_LOCKED");
      expect((error as AgError).message).toContain(`pid ${process.pid}`);
      expect((error as AgError).message).toContain("port 9555");
    }
    expect(readLiveInstance(dir)?.baseUrl).toBe("http://127.0.0.1:9555");
    lock.release();
    expect(readLiveInstance(dir)).toBeNull();
    acquireInstanceLock(dir, { version: "1", startedAt: "now" }).release();
  });

  test("a pid reused since (another start time) does not lock the directory", () => {
    const dir = tempDir();
    // Our own pid is alive and runs our executable; only the recorded start time tells it apart.
    const start = readProcStat(process.pid)?.startTime ?? 0;
    writeFileSync(
      instanceFile(dir),
      JSON.stringify({ pid: process.pid, version: "0", startedAt: "then", procStart: start + 1 }),
    );
    expect(readLiveInstance(dir)).toBeNull();
    const lock = acquireInstanceLock(dir, { version: "1", startedAt: "now" });
    expect(readLiveInstance(dir)?.procStart).toBe(start);
    lock.release();
  });

  test("a corrupt lock file is replaced", () => {
    const dir = tempDir();
    writeFileSync(instanceFile(dir), "{not json");
    acquireInstanceLock(dir, { version: "1", startedAt: "now" }).release();
  });
});
