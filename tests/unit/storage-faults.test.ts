import { Database } from "bun:sqlite";
import { describe, expect, test } from "bun:test";
import { renameSync } from "node:fs";
import { join } from "node:path";
import { loadConfig } from "../../src/config/load.ts";
import { createUntrackedAgents } from "../../src/drivers/tmux/untracked.ts";
import { createHealthService } from "../../src/health/service.ts";
import { doctorPassed, runDoctor } from "../../src/init/doctor.ts";
import { toErrorBody } from "../../src/server/errors.ts";
import { AgError } from "../../src/shared/errors.ts";
import { openDatabase } from "../../src/store/db.ts";
import { storageFault } from "../../src/store/faults.ts";
import { createStorageGuard } from "../../src/store/guard.ts";
import { testApp } from "../helpers/app.ts";
import { simulateAgents } from "../helpers/simulated-agent.ts";
import { tempDir } from "../helpers/temp.ts";
import { until } from "../helpers/until.ts";

const quiet = { warn() {}, error() {}, info() {} };

/** An error as bun:sqlite throws it: SQLiteError with the extended result code's name. */
function sqliteError(code: string, message: string): Error {
  return Object.assign(new Error(message), { name: "SQLiteError", code, errno: 0 });
}

describe("storage faults by their code", () => {
  test("SQLite's and the file system's codes: full → STORAGE_FULL (507), I/O, read-only, cannot open → STORAGE_UNAVAILABLE (503)", () => {
    const cases: Array<[unknown, string | null]> = [
      [sqliteError("SQLITE_FULL", "database or disk is full"), "STORAGE_FULL"],
      [Object.assign(new Error("no space"), { code: "ENOSPC" }), "STORAGE_FULL"],
      [Object.assign(new Error("quota"), { code: "EDQUOT" }), "STORAGE_FULL"],
      [sqliteError("SQLITE_IOERR_WRITE", "disk I/O error"), "STORAGE_UNAVAILABLE"],
      [sqliteError("SQLITE_IOERR", "disk I/O error"), "STORAGE_UNAVAILABLE"],
      [sqliteError("SQLITE_READONLY", "attempt to write a readonly database"), "STORAGE_UNAVAILABLE"],
      [sqliteError("SQLITE_CANTOPEN", "unable to open database file"), "STORAGE_UNAVAILABLE"],
      [Object.assign(new Error("read-only fs"), { code: "EROFS" }), "STORAGE_UNAVAILABLE"],
      [sqliteError("SQLITE_CONSTRAINT_UNIQUE", "UNIQUE constraint failed"), null],
      [new Error("plain"), null],
      ["text", null],
    ];
    for (const [error, code] of cases) expect<string | null>(storageFault(error)?.code ?? null).toBe(code);
  });

  test("the HTTP edge answers a storage fault with its envelope, never a bare 500", () => {
    const request = new Request("http://localhost/v1/templates", { method: "POST" });
    const logged: string[] = [];
    const full = toErrorBody(
      sqliteError("SQLITE_FULL", "database or disk is full"),
      "UNKNOWN",
      request,
      (l) => logged.push(l),
    );
    expect(full).toMatchObject({ code: "STORAGE_FULL", statusCode: 507 });
    expect(full.error).toContain("SQLITE_FULL: database or disk is full");
    const io = toErrorBody(sqliteError("SQLITE_IOERR_FSYNC", "disk I/O error"), "UNKNOWN", request);
    expect(io).toMatchObject({ code: "STORAGE_UNAVAILABLE", statusCode: 503 });
    expect(logged).toEqual([]);
  });
});

describe("a kill whose record the store refuses", () => {
  test("nothing is done: the window stays, the session is running on record and in memory, no event", async () => {
    const app = testApp();
    simulateAgents(app);
    const created = await app.request("POST", "/v1/sessions", { body: { workDir: tempDir() } });
    const id = ((await created.json()) as { id: string }).id;
    await until(() => app.repo.get(id)?.status === "idle");
    const windowId = app.repo.get(id)!.windowId!;
    const events = app.events.length;

    // Every write of this connection now fails as a read-only store does (SQLITE_READONLY).
    app.db.run("PRAGMA query_only = ON");
    const refused = await app.request("DELETE", `/v1/sessions/${id}`);
    expect(refused.status).toBe(503);
    expect(await refused.json()).toMatchObject({ code: "STORAGE_UNAVAILABLE" });
    expect(app.tmux.window(windowId)).toBeDefined();
    expect(app.repo.get(id)).toMatchObject({ status: "idle", endedAt: null });
    expect(app.live.get(id)?.status().status).toBe("idle");
    expect(app.events.slice(events).map((e) => e.event)).toEqual([]);

    app.db.run("PRAGMA query_only = OFF");
    const killed = await app.request("DELETE", `/v1/sessions/${id}`);
    expect(((await killed.json()) as { status: string }).status).toBe("killed");
    expect(app.tmux.window(windowId)).toBeUndefined();
  });
});

describe("the storage guard", () => {
  function opened() {
    const dir = tempDir();
    const path = join(dir, "state.db");
    const db = openDatabase(path);
    const guard = createStorageGuard({ db, path, logger: quiet });
    return { dir, path, db, guard };
  }

  test("a database file removed while open: noticed by the watch, every write refused, health says so; put back, it heals", async () => {
    const { path, db, guard } = opened();
    try {
      expect(guard.check()).toMatchObject({ healthy: true, code: null, sameFile: true });
      renameSync(path, `${path}.moved`);
      await until(() => !guard.check().sameFile);
      expect(guard.check()).toMatchObject({ healthy: false, code: "STORAGE_REPLACED" });
      expect(() => guard.assertWritable()).toThrow(expect.objectContaining({ code: "STORAGE_REPLACED" }));
      // Writes that do not ask the guard (a hook's status) are refused too: nothing goes to the ghost.
      expect(() =>
        db.run("INSERT INTO memory (key, value, created_at, updated_at) VALUES ('a', 'b', '', '')"),
      ).toThrow(expect.objectContaining({ code: "SQLITE_READONLY" }));
      expect(guard.noted(sqliteError("SQLITE_READONLY", "readonly"))?.code).toBe("STORAGE_REPLACED");
      expect(guard.noted(new Error("not a storage fault"))).toBeNull();
      renameSync(`${path}.moved`, path);
      await until(() => guard.check().sameFile);
      expect(guard.check()).toMatchObject({ healthy: true, code: null });
      guard.assertWritable(true);
    } finally {
      guard.close();
      db.close();
    }
  });

  test("a fault met by a write is remembered until a probe write succeeds", () => {
    const { db, guard } = opened();
    try {
      expect(guard.noted(new Error("not storage"))).toBeNull();
      expect(guard.noted(sqliteError("SQLITE_FULL", "database or disk is full"))?.code).toBe("STORAGE_FULL");
      // The store takes writes (the disk has room again): the next look heals it, no restart.
      expect(guard.check()).toMatchObject({ healthy: true, code: null });
      guard.noted(sqliteError("SQLITE_IOERR_WRITE", "disk I/O error"));
      expect(() => guard.assertWritable()).not.toThrow();
    } finally {
      guard.close();
      db.close();
    }
  });

  test("health is degraded while the store refuses writes, and says why", async () => {
    let storage = {
      healthy: false,
      error: "the state store is full (SQLITE_FULL)",
      code: "STORAGE_FULL" as const,
    };
    const health = createHealthService({
      version: "1",
      startedAt: 0,
      tmux: { check: async () => ({ healthy: true, error: null }) },
      sessions: { stats: () => ({ total: 0, active: 0, idle: 0, stalled: 0, byStatus: {} }) },
      storage: { check: () => storage },
    });
    expect(await health.check()).toMatchObject({ status: "degraded", storage });
    storage = { healthy: true, error: null, code: null } as never;
    expect((await health.check()).status).toBe("ok");
  });
});

test("a store opened read-only refuses writes as STORAGE_UNAVAILABLE (real SQLite code)", () => {
  const path = join(tempDir(), "state.db");
  openDatabase(path).close();
  const readonly = new Database(path, { readonly: true });
  try {
    let caught: unknown;
    try {
      readonly.run("PRAGMA user_version = 7");
    } catch (error) {
      caught = error;
    }
    expect(storageFault(caught)?.code).toBe("STORAGE_UNAVAILABLE");
  } finally {
    readonly.close();
  }
});

test("ag doctor: a store refusing writes fails the server check with its code; untracked agents are a warning", async () => {
  const cwd = tempDir();
  const checks = await runDoctor({
    cwd,
    agents: [],
    loadConfig: () => loadConfig({ env: {}, cwd, home: tempDir(), containerRoot: tempDir() }),
    version: async () => "tmux 3.3a",
    health: async () => ({
      url: "http://127.0.0.1:9100",
      version: "1.0.0",
      status: "degraded",
      storage: { healthy: false, error: "the state store is full (SQLITE_FULL)", code: "STORAGE_FULL" },
      untracked: ["s-1", "s-2"],
    }),
  });
  expect(checks.find((c) => c.name === "server")).toMatchObject({
    status: "fail",
    code: "STORAGE_FULL",
    detail: expect.stringContaining("refuses writes: the state store is full"),
  });
  expect(checks.find((c) => c.name === "untracked agents")).toMatchObject({
    status: "warn",
    detail: expect.stringContaining(
      "(s-1, s-2); adopt them: ag doctor --adopt-untracked, or end them: ag doctor --end-untracked",
    ),
  });
  expect(doctorPassed(checks)).toBe(false);
});

test("an action done whose audit record the store refuses is not passed off as recorded: the answer is the storage code, saying so", async () => {
  const app = testApp();
  app.audit.append = () => {
    throw sqliteError("SQLITE_FULL", "database or disk is full");
  };
  const response = await app.request("POST", "/v1/templates", { body: { name: "kept", workDir: tempDir() } });
  expect(response.status).toBe(507);
  const body = (await response.json()) as { code: string; error: string };
  expect(body.code).toBe("STORAGE_FULL");
  expect(body.error).toContain("answered 201, but its audit record could not be written");
  // What was done stays done, and the client was told.
  expect(app.templates.list().map((t) => t.name)).toEqual(["kept"]);
});

describe("untracked agents", () => {
  test("a tmux that cannot be listed is TMUX_UNAVAILABLE (503), not an internal error", async () => {
    const untracked = createUntrackedAgents({
      tmux: {
        listPanes: () => Promise.reject(new Error("tmux connection lost: EPIPE")),
        killPane: async () => {},
      },
      known: () => false,
    });
    const error = await untracked.list().catch((e) => e);
    expect(error).toBeInstanceOf(AgError);
    expect([error.code, error.statusCode]).toEqual(["TMUX_UNAVAILABLE", 503]);
    expect(error.message).toContain("EPIPE");
  });
});
