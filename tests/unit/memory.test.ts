import { describe, expect, test } from "bun:test";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { createMemoryService, ttlOf } from "../../src/memory/index.ts";
import { createLogger } from "../../src/shared/log.ts";
import { openDatabase } from "../../src/store/db.ts";
import { MEMORY_MIGRATIONS } from "../../src/store/migrations.ts";
import { createManualClock } from "../fakes/clock.ts";
import { sampleSession, testApp } from "../helpers/app.ts";
import { simulateAgents } from "../helpers/simulated-agent.ts";
import { tempDir } from "../helpers/temp.ts";

// biome-ignore lint/suspicious/noExplicitAny: response bodies are inspected field by field
type Json = Record<string, any>;

const DAY = 24 * 60 * 60;

async function call(app: ReturnType<typeof testApp>, method: string, path: string, body?: unknown) {
  const response = await app.request(method, path, { body });
  return { status: response.status, body: (await response.json()) as Json };
}

describe("memory over HTTP", () => {
  test("store, read, replace, list by prefix and scope, delete", async () => {
    const app = testApp();
    const created = await call(app, "POST", "/v1/memory", { key: "project/style", value: "tabs" });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ key: "project/style", value: "tabs", expiresAt: null });
    expect(Date.parse(created.body.createdAt)).not.toBeNaN();

    const replaced = await call(app, "POST", "/v1/memory", { key: "project/style", value: "spaces" });
    expect(replaced.status).toBe(200);
    expect(replaced.body).toMatchObject({ value: "spaces", createdAt: created.body.createdAt });

    await call(app, "POST", "/v1/memory", { key: "project/a/b/c", value: "deep" });
    await call(app, "POST", "/v1/memory", { key: "user/name", value: "Ada" });
    await call(app, "POST", "/v1/memory", { key: "team/100%_done", value: "x" });

    expect((await call(app, "GET", "/v1/memory/project/a/b/c")).body.value).toBe("deep");
    expect((await call(app, "GET", "/v1/memory/project%2Fa%2Fb%2Fc")).body.value).toBe("deep");
    const all = await call(app, "GET", "/v1/memory");
    expect(all.body.map((e: Json) => e.key)).toEqual([
      "project/a/b/c",
      "project/style",
      "team/100%_done",
      "user/name",
    ]);
    const prefixed = await call(app, "GET", "/v1/memory?prefix=project/");
    expect(prefixed.body.map((e: Json) => e.key)).toEqual(["project/a/b/c", "project/style"]);
    // LIKE wildcards in a prefix are literal characters.
    expect((await call(app, "GET", "/v1/memory?prefix=team/100%25_")).body).toHaveLength(1);
    expect((await call(app, "GET", "/v1/memory?prefix=team/1_0")).body).toHaveLength(0);
    const scope = await call(app, "GET", "/v1/memories?scope=user");
    expect(scope.body.map((e: Json) => e.key)).toEqual(["user/name"]);

    expect(await call(app, "DELETE", "/v1/memory/project/a/b/c")).toEqual({
      status: 200,
      body: { key: "project/a/b/c", deleted: true },
    });
    const gone = await call(app, "GET", "/v1/memory/project/a/b/c");
    expect(gone).toMatchObject({ status: 404, body: { code: "MEMORY_NOT_FOUND", statusCode: 404 } });
    expect((await call(app, "DELETE", "/v1/memory/project/a/b/c")).body.code).toBe("MEMORY_NOT_FOUND");
  });

  test.each([
    [{ key: "", value: "v" }, "body.key"],
    [{ key: "k".repeat(257), value: "v" }, "body.key"],
    [{ key: "bad\nkey", value: "v" }, "body.key"],
    [{ key: "tab\tkey", value: "v" }, "body.key"],
    [{ value: "v" }, "body.key"],
    [{ key: "k" }, "body.value"],
    [{ key: "k", value: "v".repeat(100 * 1024 + 1) }, "body.value"],
    // 100 KiB of characters, but 200 KiB of UTF-8.
    [{ key: "k", value: "é".repeat(100 * 1024) }, "body.value"],
    [{ key: "k", value: "v", ttlSeconds: 30 * DAY + 1 }, "body.ttlSeconds"],
    [{ key: "k", value: "v", ttlSeconds: 0 }, "body.ttlSeconds"],
    [{ key: "k", value: "v", ttlSeconds: 1.5 }, "body.ttlSeconds"],
    [{ key: "k", value: "v", ttlMs: 30 * DAY * 1000 + 1 }, "body.ttlMs"],
  ])("%j is a 400 naming %s, and nothing is stored", async (body, field) => {
    const app = testApp();
    const answer = await call(app, "POST", "/v1/memory", body);
    expect(answer.status).toBe(400);
    expect(answer.body).toMatchObject({ code: "VALIDATION_ERROR", statusCode: 400 });
    expect(answer.body.error).toContain(`invalid ${field}`);
    expect((await call(app, "GET", "/v1/memory")).body).toEqual([]);
  });

  test("the limits themselves are accepted: a 256-character key, 100 KiB, 30 days", async () => {
    const app = testApp();
    const answer = await call(app, "POST", "/v1/memory", {
      key: "k".repeat(256),
      value: "v".repeat(100 * 1024),
      ttlSeconds: 30 * DAY,
    });
    expect(answer.status).toBe(201);
  });

  test("a bad scope is a 400 that lists the scopes", async () => {
    const answer = await call(testApp(), "GET", "/v1/memories?scope=world");
    expect(answer.status).toBe(400);
    expect(answer.body.error).toBe("invalid query.scope: expected one of project, user, team");
  });

  test("session memories live under session/<id>/ and need the session", async () => {
    const app = testApp();
    const id = crypto.randomUUID();
    const missing = await call(app, "POST", `/v1/sessions/${id}/memories`, { key: "note", value: "v" });
    expect(missing.body.code).toBe("SESSION_NOT_FOUND");
    expect((await call(app, "GET", `/v1/sessions/${id}/memories`)).body.code).toBe("SESSION_NOT_FOUND");

    const session = sampleSession();
    app.repo.insert(session);
    const stored = await call(app, "POST", `/v1/sessions/${session.id}/memories`, {
      key: "note",
      value: "v",
    });
    expect(stored.status).toBe(201);
    expect(stored.body.key).toBe(`session/${session.id}/note`);
    const listed = await call(app, "GET", `/v1/sessions/${session.id}/memories`);
    expect(listed.body.map((e: Json) => e.key)).toEqual([`session/${session.id}/note`]);
    expect((await call(app, "GET", `/v1/memory/session/${session.id}/note`)).body.value).toBe("v");
    // The stored key (prefix included) must fit the 256-character limit.
    const long = await call(app, "POST", `/v1/sessions/${session.id}/memories`, {
      key: "k".repeat(240),
      value: "v",
    });
    expect(long.status).toBe(400);
    expect(long.body.error).toContain("invalid body.key");
  });

  test("memoryBridge.enabled = false: every route is 404 FEATURE_DISABLED", async () => {
    const app = testApp({ memoryEnabled: false });
    for (const [method, path, body] of [
      ["POST", "/v1/memory", { key: "k", value: "v" }],
      ["GET", "/v1/memory", undefined],
      ["GET", "/v1/memory/k", undefined],
      ["DELETE", "/v1/memory/k", undefined],
      ["GET", "/v1/memories?scope=team", undefined],
    ] as const) {
      const answer = await call(app, method, path, body);
      expect({ path, method, status: answer.status, code: answer.body.code }).toEqual({
        path,
        method,
        status: 404,
        code: "FEATURE_DISABLED",
      });
    }
  });
});

describe("TTL and the reaper (injected clock)", () => {
  function setup() {
    const clock = createManualClock();
    const db = openDatabase(":memory:", MEMORY_MIGRATIONS);
    const logger = createLogger({ level: "silent", json: true });
    const memory = createMemoryService({
      db,
      clock,
      logger,
      settings: { enabled: true, reaperIntervalMs: 60_000 },
    });
    const rows = () => (db.query("SELECT count(*) AS n FROM memory").get() as { n: number }).n;
    return { clock, memory, rows };
  }

  test("ttlSeconds wins over ttlMs; ttlMs rounds up to whole seconds", () => {
    expect(ttlOf({ ttlSeconds: 5, ttlMs: 999_000 })).toBe(5000);
    expect(ttlOf({ ttlMs: 1 })).toBe(1000);
    expect(ttlOf({ ttlMs: 1500 })).toBe(2000);
    expect(ttlOf({})).toBeNull();
  });

  test("an expired entry is invisible at once, before the reaper frees it", () => {
    const { clock, memory, rows } = setup();
    const { entry } = memory.set({ key: "team/tmp", value: "v", ttlSeconds: 10 });
    expect(entry.expiresAt).toBe(new Date(clock.now() + 10_000).toISOString());
    memory.set({ key: "team/keep", value: "v" });
    clock.advance(9_999);
    expect(memory.get("team/tmp").value).toBe("v");
    clock.advance(1);
    expect(() => memory.get("team/tmp")).toThrow(expect.objectContaining({ code: "MEMORY_NOT_FOUND" }));
    expect(memory.list().map((e) => e.key)).toEqual(["team/keep"]);
    expect(memory.lookup("team/tmp")).toBeNull();
    expect(rows()).toBe(2);
    // Storing the key again makes a new entry, not a revival of the old one.
    clock.advance(5_000);
    const again = memory.set({ key: "team/tmp", value: "new" });
    expect(again.created).toBe(true);
    expect(again.entry.createdAt).toBe(new Date(clock.now()).toISOString());
  });

  test("the reaper runs every reaperIntervalMs and removes only expired rows", () => {
    const { clock, memory, rows } = setup();
    memory.set({ key: "a", value: "v", ttlMs: 30_000 });
    memory.set({ key: "b", value: "v", ttlSeconds: 90 });
    memory.set({ key: "c", value: "v" });
    memory.start();
    clock.advance(59_999);
    expect(rows()).toBe(3);
    clock.advance(1); // first tick at 60 s: a expired at 30 s
    expect(rows()).toBe(2);
    clock.advance(60_000); // 120 s: b expired at 90 s
    expect(rows()).toBe(1);
    memory.stop();
    memory.set({ key: "d", value: "v", ttlSeconds: 1 });
    clock.advance(600_000);
    expect(rows()).toBe(2); // stopped: nothing reaped, though d is invisible
    expect(memory.list().map((e) => e.key)).toEqual(["c"]);
  });

  test("persistPath: entries survive closing and reopening the file", () => {
    const path = join(tempDir("ag-memory-"), "nested", "memory.db");
    mkdirSync(join(path, ".."), { recursive: true });
    const logger = createLogger({ level: "silent", json: true });
    const settings = { enabled: true, reaperIntervalMs: 60_000 };
    const first = openDatabase(path, MEMORY_MIGRATIONS);
    createMemoryService({ db: first, clock: createManualClock(), logger, settings }).set({
      key: "k",
      value: "kept",
    });
    first.close();
    const second = openDatabase(path, MEMORY_MIGRATIONS);
    const reopened = createMemoryService({ db: second, clock: createManualClock(), logger, settings });
    expect(reopened.get("k").value).toBe("kept");
    second.close();
  });
});

describe("memoryKeys on session create", () => {
  async function create(app: ReturnType<typeof testApp>, body: Record<string, unknown>) {
    const response = await app.request("POST", "/v1/sessions", { body: { workDir: tempDir(), ...body } });
    return (await response.json()) as Json;
  }
  const pasted = (app: ReturnType<typeof testApp>, id: string) =>
    app.tmux.inputs(app.repo.get(id)!.paneId!).find((i) => i.kind === "paste");

  test("entries stored through the API, an expired one reported missing", async () => {
    const app = testApp();
    simulateAgents(app);
    await call(app, "POST", "/v1/memory", { key: "project/style", value: "tabs" });
    await call(app, "POST", "/v1/memory", { key: "team/tmp", value: "soon gone", ttlMs: 1 });
    await Bun.sleep(1_050);
    const body = await create(app, { prompt: "go", memoryKeys: ["team/tmp", "project/style"] });
    expect(body.warnings).toEqual(["memory key not found: team/tmp"]);
    expect(pasted(app, body.id)).toEqual({
      kind: "paste",
      text: "[Memory context]\nproject/style: tabs\n\ngo",
    });
  });

  test("the prompt with its memories must fit a prompt's limits; no window opens when it does not", async () => {
    const app = testApp();
    simulateAgents(app);
    for (const n of [1, 2, 3])
      await call(app, "POST", "/v1/memory", { key: `big/${n}`, value: "v".repeat(100 * 1024) });
    await call(app, "POST", "/v1/memory", { key: "keys/escape", value: "hi\u0003\u001b[Aboom" });
    const response = await app.request("POST", "/v1/sessions", {
      body: { workDir: tempDir(), prompt: "go", memoryKeys: ["big/1", "big/2", "big/3"] },
    });
    expect(response.status).toBe(413);
    expect(((await response.json()) as Json).code).toBe("PAYLOAD_TOO_LARGE");
    const control = await app.request("POST", "/v1/sessions", {
      body: { workDir: tempDir(), prompt: "go", memoryKeys: ["keys/escape"] },
    });
    expect(control.status).toBe(400);
    expect(app.tmux.server.windows.size).toBe(0);
  });

  test("a disabled bridge ignores memoryKeys with a warning and sends the prompt alone", async () => {
    const app = testApp({ memoryEnabled: false, memory: {} });
    simulateAgents(app);
    const body = await create(app, { prompt: "go", memoryKeys: ["project/style"] });
    expect(body.warnings).toEqual(["memoryKeys ignored: the memory bridge is disabled"]);
    expect(pasted(app, body.id)).toEqual({ kind: "paste", text: "go" });
  });

  test("memoryKeys without a prompt: nothing is typed, and the warning says why", async () => {
    const app = testApp({ memory: { "project/style": "tabs" } });
    simulateAgents(app);
    const body = await create(app, { memoryKeys: ["project/style"] });
    expect(body.warnings).toEqual(["memoryKeys ignored: there is no prompt to prepend them to"]);
    expect(body.promptDelivery).toBeNull();
  });
});
