import { describe, expect, test } from "bun:test";
import { mkdirSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { createEventBus } from "../../src/events/bus.ts";
import { eventRoutes } from "../../src/server/routes/events.ts";
import { createLogger } from "../../src/shared/log.ts";
import { createManualClock } from "../fakes/clock.ts";
import { call, MASTER, newKey } from "../helpers/access.ts";
import { type TestApp, testApp } from "../helpers/app.ts";
import { sseReader } from "../helpers/sse.ts";
import { tempDir } from "../helpers/temp.ts";

// biome-ignore lint/suspicious/noExplicitAny: response bodies are inspected field by field
type Json = Record<string, any>;

describe("API keys", () => {
  test("the key is shown once, stored hashed, listed without it, and works as a bearer token", async () => {
    const app = testApp({ authToken: MASTER });
    const key = await newKey(app, { name: "ci", scopes: ["sessions:read"] });
    expect(key.key).toMatch(/^agk_[A-Za-z0-9_-]{43}$/);
    expect(key).toMatchObject({ name: "ci", scopes: ["sessions:read"], tenantId: null, expiresAt: null });
    expect(key.key.startsWith(key.prefix)).toBe(true);
    const listed = await call(app, "GET", "/v1/auth/keys", { token: MASTER });
    expect(listed.body).toEqual([{ ...key, key: undefined }].map(({ key: _, ...rest }) => rest));
    expect(JSON.stringify(listed.body)).not.toContain(key.key);
    const stored = app.db.query("SELECT * FROM api_keys").all();
    expect(JSON.stringify(stored)).not.toContain(key.key.slice(key.prefix.length));
    expect((await call(app, "GET", "/v1/sessions", { token: key.key })).status).toBe(200);
    const after = await call(app, "GET", "/v1/auth/keys", { token: MASTER });
    expect(after.body[0].lastUsedAt).not.toBeNull();
  });

  test("revoked and expired keys stop working at once; an unknown id is KEY_NOT_FOUND", async () => {
    const clock = createManualClock(Date.now());
    const app = testApp({ authToken: MASTER, clock });
    const revoked = await newKey(app, { name: "a", scopes: ["*"] });
    const deleted = await call(app, "DELETE", `/v1/auth/keys/${revoked.id}`, { token: MASTER });
    expect(deleted.status).toBe(200);
    expect(deleted.body.id).toBe(revoked.id);
    expect(deleted.body.key).toBeUndefined();
    expect((await call(app, "GET", "/v1/sessions", { token: revoked.key })).status).toBe(401);
    const again = await call(app, "DELETE", `/v1/auth/keys/${revoked.id}`, { token: MASTER });
    expect([again.status, again.body.code]).toEqual([404, "KEY_NOT_FOUND"]);

    const expiring = await newKey(app, {
      name: "b",
      scopes: ["*"],
      expiresAt: new Date(clock.now() + 60_000).toISOString(),
    });
    expect((await call(app, "GET", "/v1/sessions", { token: expiring.key })).status).toBe(200);
    clock.advance(60_000);
    expect((await call(app, "GET", "/v1/sessions", { token: expiring.key })).status).toBe(401);
  });

  test("bad requests are 400s that name the field", async () => {
    const app = testApp({ authToken: MASTER });
    for (const [body, field] of [
      [{ name: "x", scopes: ["sessions:admin"] }, "body.scopes"],
      [{ name: "x", scopes: [] }, "body.scopes"],
      [{ name: "", scopes: ["*"] }, "body.name"],
      [{ name: "x", scopes: ["*"], tenantId: "a/b" }, "body.tenantId"],
      [{ name: "x", scopes: ["*"], expiresAt: "tomorrow" }, "body.expiresAt"],
      [{ name: "x", scopes: ["*"], expiresAt: "2001-01-01T00:00:00Z" }, "body.expiresAt"],
      [{ name: "x", scopes: ["*"], owner: "me" }, "body"],
    ] as const) {
      const response = await call(app, "POST", "/v1/auth/keys", { token: MASTER, body });
      expect([response.status, response.body.code]).toEqual([400, "VALIDATION_ERROR"]);
      expect(response.body.error).toContain(field);
    }
    expect((await call(app, "GET", "/v1/auth/keys", { token: MASTER })).body).toEqual([]);
  });

  test("only the master token or an admin key manages keys; an admin key grants no more than it holds", async () => {
    const app = testApp({ authToken: MASTER });
    const reader = await newKey(app, { name: "r", scopes: ["sessions:read", "sessions:write"] });
    const denied = await call(app, "GET", "/v1/auth/keys", { token: reader.key });
    expect([denied.status, denied.body.code]).toEqual([403, "FORBIDDEN"]);
    expect(denied.body.error).toContain("admin");

    const admin = await newKey(app, { name: "adm", scopes: ["admin", "sessions:read"] });
    const ok = await call(app, "POST", "/v1/auth/keys", {
      token: admin.key,
      body: { name: "ro", scopes: ["sessions:read"] },
    });
    expect(ok.status).toBe(201);
    const escalate = await call(app, "POST", "/v1/auth/keys", {
      token: admin.key,
      body: { name: "all", scopes: ["*"] },
    });
    expect([escalate.status, escalate.body.code]).toEqual([403, "FORBIDDEN"]);
    expect(escalate.body.error).toContain("*");

    const tenantAdmin = await newKey(app, { name: "t-adm", scopes: ["*"], tenantId: "acme" });
    const otherTenant = await call(app, "POST", "/v1/auth/keys", {
      token: tenantAdmin.key,
      body: { name: "x", scopes: ["sessions:read"], tenantId: "globex" },
    });
    expect(otherTenant.status).toBe(403);
    const own = await newKey(
      app,
      { name: "own", scopes: ["sessions:read"], tenantId: "acme" },
      tenantAdmin.key,
    );
    const seen = await call(app, "GET", "/v1/auth/keys", { token: tenantAdmin.key });
    expect(seen.body.map((k: Json) => k.name).sort()).toEqual(["own", "t-adm"]);
    const foreign = await call(app, "DELETE", `/v1/auth/keys/${reader.id}`, { token: tenantAdmin.key });
    expect(foreign.status).toBe(404);
    expect((await call(app, "DELETE", `/v1/auth/keys/${own.id}`, { token: tenantAdmin.key })).status).toBe(
      200,
    );
  });
});

describe("scopes", () => {
  test("GET needs :read, other methods :write; 403 names the missing scope", async () => {
    const app = testApp({ authToken: MASTER });
    const reader = await newKey(app, { name: "r", scopes: ["sessions:read", "memory:write"] });
    expect((await call(app, "GET", "/v1/sessions", { token: reader.key })).status).toBe(200);
    const write = await call(app, "POST", "/v1/sessions", {
      token: reader.key,
      body: { workDir: tempDir() },
    });
    expect(write.status).toBe(403);
    expect(write.body).toEqual({
      error: "key:r lacks the scope sessions:write (needed for POST /v1/sessions)",
      code: "FORBIDDEN",
      statusCode: 403,
    });
    const memory = await call(app, "GET", "/v1/memory", { token: reader.key });
    expect(memory.body.error).toContain("memory:read");
    expect(
      (await call(app, "POST", "/v1/memory", { token: reader.key, body: { key: "k", value: "v" } })).status,
    ).toBe(201);
  });

  test("the scope check comes before validation: a key without the scope learns nothing of the body", async () => {
    const app = testApp({ authToken: MASTER });
    const reader = await newKey(app, { name: "r", scopes: ["sessions:read"] });
    const response = await call(app, "POST", "/v1/templates", { token: reader.key, body: { nonsense: 1 } });
    expect([response.status, response.body.code]).toEqual([403, "FORBIDDEN"]);
  });

  test("without SVC_AUTH_TOKEN, a presented key still narrows what its holder may do", async () => {
    const app = testApp();
    const key = await newKey(app, { name: "narrow", scopes: ["sessions:read"] }, app.token);
    expect((await call(app, "GET", "/v1/sessions", { token: key.key })).status).toBe(200);
    expect((await call(app, "GET", "/v1/audit", { token: key.key })).status).toBe(403);
    expect((await call(app, "GET", "/v1/audit")).status).toBe(200);
  });
});

/** An app whose event routes see its sessions, plus a bus to publish on. */
function appWithStreams(options: Parameters<typeof testApp>[0] = {}) {
  const bus = createEventBus({ logger: createLogger({ level: "silent", json: true }) });
  let app: TestApp | undefined;
  const routes = eventRoutes({
    bus,
    sessions: { get: (id) => app!.sessions.get(id), sees: (owner, id) => app!.sessions.sees(owner, id) },
    clock: options.clock ?? createManualClock(),
    settings: { idleMs: 60_000, clientTimeoutMs: 300_000 },
  });
  app = testApp({ ...options, bus, plugins: [routes] });
  return app;
}

describe("SSE tokens", () => {
  test("single use, 60 s, only as ?token= on the event streams", async () => {
    const clock = createManualClock(Date.now());
    const app = appWithStreams({ authToken: MASTER, clock });
    const reader = await newKey(app, { name: "r", scopes: ["sessions:read"] });
    const minted = await call(app, "POST", "/v1/auth/sse-token", { token: reader.key });
    expect(minted.status).toBe(201);
    const { token } = minted.body;
    expect(token).toMatch(/^ags_[A-Za-z0-9_-]{43}$/);
    expect(minted.body.expiresInSeconds).toBe(60);
    expect((await call(app, "GET", `/v1/events?token=${token}`)).status).toBe(200);
    const reused = await call(app, "GET", `/v1/events?token=${token}`);
    expect([reused.status, reused.body.error]).toEqual([401, "invalid SSE token"]);

    const late = (await call(app, "POST", "/v1/auth/sse-token", { token: reader.key })).body.token;
    clock.advance(60_000);
    expect((await call(app, "GET", `/v1/events?token=${late}`)).status).toBe(401);

    const elsewhere = (await call(app, "POST", "/v1/auth/sse-token", { token: reader.key })).body.token;
    expect((await call(app, "GET", `/v1/sessions?token=${elsewhere}`)).status).toBe(401);
    // Not spent by the refusal elsewhere: it still opens a stream.
    expect((await call(app, "GET", `/v1/events?token=${elsewhere}`)).status).toBe(200);
  });

  test("no other credential is taken from a query string", async () => {
    const app = appWithStreams({ authToken: MASTER });
    const key = await newKey(app, { name: "k", scopes: ["*"] });
    expect((await call(app, "GET", `/v1/events?token=${MASTER}`)).status).toBe(401);
    expect((await call(app, "GET", `/v1/events?token=${key.key}`)).status).toBe(401);
  });

  test("a token carries its key's scopes, and dies with its key", async () => {
    const app = appWithStreams({ authToken: MASTER });
    const memoryOnly = await newKey(app, { name: "m", scopes: ["memory:read"] });
    expect((await call(app, "POST", "/v1/auth/sse-token", { token: memoryOnly.key })).status).toBe(403);
    const reader = await newKey(app, { name: "r", scopes: ["sessions:read"] });
    const token = (await call(app, "POST", "/v1/auth/sse-token", { token: reader.key })).body.token;
    await call(app, "DELETE", `/v1/auth/keys/${reader.id}`, { token: MASTER });
    expect((await call(app, "GET", `/v1/events?token=${token}`)).status).toBe(401);
  });
});

describe("tenant workdirs", () => {
  /** root/, root/allowed/, root2/ (a prefix sibling), outside/, root/link → outside/. */
  function tree() {
    const base = tempDir("ag-tenants-");
    const dirs = {
      root: join(base, "root"),
      allowed: join(base, "root", "allowed"),
      other: join(base, "root", "other"),
      root2: join(base, "root2"),
      outside: join(base, "outside"),
      link: join(base, "root", "allowed", "link"),
    };
    for (const dir of [dirs.allowed, dirs.other, dirs.root2, dirs.outside])
      mkdirSync(dir, { recursive: true });
    symlinkSync(dirs.outside, dirs.link);
    return dirs;
  }

  async function setup(allowedPaths?: string[]) {
    const dirs = tree();
    const app = testApp({
      authToken: MASTER,
      tenantWorkdirs: { acme: { root: dirs.root, ...(allowedPaths ? { allowedPaths } : {}) } },
    });
    const acme = await newKey(app, { name: "acme", scopes: ["*"], tenantId: "acme" });
    const loose = await newKey(app, { name: "loose", scopes: ["*"], tenantId: "initech" });
    const create = (token: string, workDir: string) =>
      call(app, "POST", "/v1/sessions", { token, body: { workDir } });
    return { app, dirs, acme, loose, create };
  }

  test("SPEC's cases: root, allowed paths, the /root2 prefix, a symlink out, `..`, master, unconfigured", async () => {
    const { app, dirs, acme, loose, create } = await setup(["allowed"]);
    expect((await create(acme.key, dirs.allowed)).status).toBe(201);
    for (const denied of [
      dirs.root, // under the root but not under an allowed path
      dirs.other,
      dirs.root2, // "/root2" starts with "/root" as a string, not as a path
      dirs.outside,
      dirs.link, // inside the root by name, outside by what it points to
      join(dirs.allowed, "..", "other"),
    ]) {
      const response = await create(acme.key, denied);
      expect([denied, response.status, response.body.code]).toEqual([denied, 403, "TENANT_WORKDIR_DENIED"]);
    }
    // The master token has no tenant; a tenant without config is unrestricted.
    expect((await create(MASTER, dirs.outside)).status).toBe(201);
    expect((await create(loose.key, dirs.root2)).status).toBe(201);
    const records = app.audit.list({ limit: 100 }).filter((r) => r.action === "session.action.denied");
    expect(records).toHaveLength(6);
    expect(records[0]).toMatchObject({ tenantId: "acme", actor: "key:acme", outcome: "denied" });
  });

  test("without allowed paths the whole root is the tenant's", async () => {
    const { dirs, acme, create } = await setup();
    expect((await create(acme.key, dirs.root)).status).toBe(201);
    expect((await create(acme.key, dirs.other)).status).toBe(201);
    expect((await create(acme.key, dirs.root2)).status).toBe(403);
    expect((await create(acme.key, dirs.link)).status).toBe(403);
  });

  test("a tenant's key sees and touches only its own sessions", async () => {
    const { app, dirs, acme, loose, create } = await setup();
    const mine = (await create(acme.key, dirs.root)).body;
    const theirs = (await create(loose.key, dirs.outside)).body;
    expect(mine.tenantId).toBe("acme");
    const listed = await call(app, "GET", "/v1/sessions", { token: acme.key });
    expect(listed.body.map((s: Json) => s.id)).toEqual([mine.id]);
    expect((await call(app, "GET", "/v1/sessions/stats", { token: acme.key })).body.total).toBe(1);
    expect((await call(app, "GET", "/v1/sessions", { token: MASTER })).body).toHaveLength(2);
    for (const [method, path] of [
      ["GET", `/v1/sessions/${theirs.id}`],
      ["GET", `/v1/sessions/${theirs.id}/pane`],
      ["POST", `/v1/sessions/${theirs.id}/send`],
      ["DELETE", `/v1/sessions/${theirs.id}`],
    ] as const) {
      const response = await call(app, method, path, {
        token: acme.key,
        body: method === "POST" ? { text: "hi" } : undefined,
      });
      expect([path, response.status, response.body.code]).toEqual([path, 404, "SESSION_NOT_FOUND"]);
    }
    const batch = await call(app, "DELETE", "/v1/sessions/batch", {
      token: acme.key,
      body: { ids: [theirs.id] },
    });
    expect(batch.body).toEqual({ killed: [], notFound: [theirs.id] });
    expect((await call(app, "GET", `/v1/sessions/${theirs.id}`, { token: MASTER })).body.status).not.toBe(
      "killed",
    );
    const template = await call(app, "POST", "/v1/templates", {
      token: acme.key,
      body: { name: "steal", sessionId: theirs.id },
    });
    expect(template.status).toBe(404);
  });

  test("a tenant's event stream carries only its own sessions' events", async () => {
    const dirs = tree();
    const app = appWithStreams({ authToken: MASTER, tenantWorkdirs: { acme: { root: dirs.root } } });
    const acme = await newKey(app, { name: "acme", scopes: ["*"], tenantId: "acme" });
    const token = (await call(app, "POST", "/v1/auth/sse-token", { token: acme.key })).body.token;
    const response = await app.handle(new Request(`http://localhost:9100/v1/events?token=${token}`));
    const reader = sseReader(response.body!);
    const mine = (await call(app, "POST", "/v1/sessions", { token: acme.key, body: { workDir: dirs.root } }))
      .body;
    await call(app, "POST", "/v1/sessions", { token: MASTER, body: { workDir: dirs.outside } });
    const seen = (await reader.available()).filter((m) => m.event !== undefined);
    expect(seen.length).toBeGreaterThan(0);
    expect(new Set(seen.map((m) => (m.data?.session as Json | undefined)?.id))).toEqual(new Set([mine.id]));
    await reader.cancel();
  });
});

describe("rate limits", () => {
  test("RateLimit-* headers on every answer to a key; 429 with Retry-After past the budget", async () => {
    const clock = createManualClock(Date.now());
    const app = testApp({ authToken: MASTER, rateLimitPerMin: 3, clock });
    const key = await newKey(app, { name: "k", scopes: ["sessions:read"] });
    const seen = [];
    for (let i = 0; i < 4; i++) seen.push(await call(app, "GET", "/v1/sessions", { token: key.key }));
    expect(seen.map((r) => r.status)).toEqual([200, 200, 200, 429]);
    expect(seen.map((r) => r.headers.get("ratelimit-remaining"))).toEqual(["2", "1", "0", "0"]);
    expect(seen[0]!.headers.get("ratelimit-limit")).toBe("3");
    expect(seen[0]!.headers.get("ratelimit-reset")).toBe("60");
    expect(seen[3]!.body.code).toBe("RATE_LIMITED");
    expect(seen[3]!.headers.get("retry-after")).toBe("60");
    // The master token is exempt; another key has its own budget.
    expect((await call(app, "GET", "/v1/sessions", { token: MASTER })).status).toBe(200);
    const other = await newKey(app, { name: "o", scopes: ["sessions:read"] });
    expect((await call(app, "GET", "/v1/sessions", { token: other.key })).status).toBe(200);
    clock.advance(60_000);
    expect((await call(app, "GET", "/v1/sessions", { token: key.key })).status).toBe(200);
  });

  test("an SSE token spends its key's budget, and the stream carries the headers too", async () => {
    const app = appWithStreams({ authToken: MASTER, rateLimitPerMin: 3 });
    const key = await newKey(app, { name: "k", scopes: ["sessions:read"] });
    const token = (await call(app, "POST", "/v1/auth/sse-token", { token: key.key })).body.token;
    const stream = await call(app, "GET", `/v1/events?token=${token}`);
    expect(stream.status).toBe(200);
    expect(stream.headers.get("content-type")).toBe("text/event-stream");
    expect(stream.headers.get("ratelimit-remaining")).toBe("1");
  });

  test("anonymous requests are counted per address", async () => {
    const app = testApp({ authToken: MASTER, rateLimitPerMin: 2 });
    const statuses = [];
    for (let i = 0; i < 3; i++)
      statuses.push((await call(app, "GET", "/v1/health", { ip: "10.0.0.1" })).status);
    expect(statuses).toEqual([200, 200, 429]);
    expect((await call(app, "GET", "/v1/health", { ip: "10.0.0.2" })).status).toBe(200);
  });

  test("requests without a credential spend nothing: a flood of them leaves guesses their budget, and the owner's page its 401", async () => {
    const app = testApp({ authToken: MASTER });
    const ip = "10.9.9.7";
    for (let i = 0; i < 50; i++) expect((await call(app, "GET", "/v1/sessions", { ip })).status).toBe(401);
    expect((await call(app, "GET", "/v1/sessions", { ip, token: "one-guess" })).status).toBe(401);
  });

  test("an address that keeps failing is slowed to 429s; a valid credential from it is never held up", async () => {
    const clock = createManualClock(Date.now());
    const app = testApp({ authToken: MASTER, clock });
    const ip = "10.9.9.9";
    for (let i = 0; i < 20; i++) {
      expect((await call(app, "GET", "/v1/sessions", { ip, token: `guess-${i}` })).status).toBe(401);
    }
    const slowed = await call(app, "GET", "/v1/sessions", { ip, token: "guess-21" });
    expect([slowed.status, slowed.body.code]).toEqual([429, "RATE_LIMITED"]);
    expect(slowed.body.error).toBe("too many failed authentication attempts from this address");
    expect(Number(slowed.headers.get("retry-after"))).toBe(60);
    // No credential is not a guess: the page that has no token yet is told to ask for one.
    expect((await call(app, "GET", "/v1/sessions", { ip })).status).toBe(401);
    expect((await call(app, "GET", "/v1/sessions", { ip, token: MASTER })).status).toBe(200);
    expect((await call(app, "GET", "/v1/sessions", { ip: "10.9.9.8", token: "guess" })).status).toBe(401);
    clock.advance(60_000);
    expect((await call(app, "GET", "/v1/sessions", { ip, token: "guess-again" })).status).toBe(401);
  });
});
