import { describe, expect, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createManualClock } from "../fakes/clock.ts";
import { call, MASTER, newKey } from "../helpers/access.ts";
import { testApp } from "../helpers/app.ts";
import { simulateAgents } from "../helpers/simulated-agent.ts";
import { tempDir } from "../helpers/temp.ts";

// biome-ignore lint/suspicious/noExplicitAny: response bodies are inspected field by field
type Json = Record<string, any>;

/**
 * Attacks on access control that once got through, each kept as the request that did it. The
 * ones that held are documented in docs/auth.md and tests/unit/access.test.ts.
 */
describe("another tenant's session memories", () => {
  test("are out of reach through the flat memory routes and memoryKeys, as if the session did not exist", async () => {
    const base = tempDir("ag-attack-memory-");
    const [acmeDir, globexDir] = [join(base, "acme"), join(base, "globex")];
    for (const dir of [acmeDir, globexDir]) mkdirSync(dir);
    const app = testApp({ authToken: MASTER, memory: { "project/shared": "for everyone" } });
    simulateAgents(app);
    const acme = (await newKey(app, { name: "acme", scopes: ["*"], tenantId: "acme" })).key;
    const globex = (await newKey(app, { name: "globex", scopes: ["*"], tenantId: "globex" })).key;
    const create = (token: string, body: Json) => call(app, "POST", "/v1/sessions", { token, body });
    const theirs = (await create(globex, { workDir: globexDir })).body.id;
    const mine = (await create(acme, { workDir: acmeDir })).body.id;
    for (const [id, token] of [
      [theirs, globex],
      [mine, acme],
    ] as const) {
      const memory = { key: "note", value: `secret of ${id}` };
      expect((await call(app, "POST", `/v1/sessions/${id}/memories`, { token, body: memory })).status).toBe(
        201,
      );
    }
    const theirKey = `session/${theirs}/note`;

    const listed = await call(app, "GET", "/v1/memory", { token: acme });
    expect(listed.body.map((e: Json) => e.key).sort()).toEqual(["project/shared", `session/${mine}/note`]);
    expect((await call(app, "GET", `/v1/memory?prefix=session/${theirs}/`, { token: acme })).body).toEqual(
      [],
    );
    for (const [method, path, body] of [
      ["GET", `/v1/memory/${theirKey}`],
      ["GET", `/v1/memory/${encodeURIComponent(theirKey)}`],
      ["DELETE", `/v1/memory/${theirKey}`],
      ["POST", "/v1/memory", { key: `session/${theirs}/planted`, value: "x" }],
    ] as const) {
      const response = await call(app, method, path, { token: acme, body });
      expect([method, path, response.status, response.body.code]).toEqual([
        method,
        path,
        404,
        "SESSION_NOT_FOUND",
      ]);
    }
    const viaPrompt = await create(acme, {
      workDir: acmeDir,
      prompt: "hello",
      memoryKeys: [theirKey],
      agentCommand: "claude --fresh",
    });
    expect(viaPrompt.status).toBe(201);
    expect(viaPrompt.body.warnings).toEqual([`memory key not found: ${theirKey}`]);
    expect(viaPrompt.body.promptDelivery.delivered).toBe(true);
    const typed = app.tmux.typed(app.repo.get(viaPrompt.body.id)!.paneId!).join("");
    expect(typed).toContain("hello");
    expect(typed).not.toContain(`secret of ${theirs}`);

    // Its own session's memories, shared entries, and the master token are untouched.
    expect((await call(app, "GET", `/v1/memory/session/${mine}/note`, { token: acme })).status).toBe(200);
    expect((await call(app, "GET", `/v1/memory/${theirKey}`, { token: MASTER })).status).toBe(200);
    expect((await call(app, "GET", "/v1/memory", { token: MASTER })).body).toHaveLength(3);
    expect((await call(app, "GET", `/v1/memory/${theirKey}`, { token: globex })).status).toBe(200);
  });
});

describe("keys", () => {
  test("expiresAt is an RFC 3339 instant: a day that does not exist or a zone-less time is refused", async () => {
    const app = testApp({ authToken: MASTER });
    for (const expiresAt of [
      "2099-02-30T00:00:00Z", // rolled over to 2 March by Date.parse
      "2099-01-01T24:00:00Z", // rolled over to the next day
      "12/01/2099", // server-local time, day and month ambiguous
      "Thu Jan 01 2099 00:00:00 GMT+0000 (UTC)",
    ]) {
      const response = await call(app, "POST", "/v1/auth/keys", {
        token: MASTER,
        body: { name: "k", scopes: ["sessions:read"], expiresAt },
      });
      expect([expiresAt, response.status, response.body.code]).toEqual([expiresAt, 400, "VALIDATION_ERROR"]);
      expect(response.body.error).toContain("body.expiresAt");
    }
    for (const [expiresAt, stored] of [
      ["2099-01-01T05:30:00+05:30", "2099-01-01T00:00:00.000Z"],
      ["2099-01-01t00:00:00.5z", "2099-01-01T00:00:00.500Z"],
      ["2096-02-29T00:00:00Z", "2096-02-29T00:00:00.000Z"],
    ]) {
      const key = await newKey(app, { name: "k", scopes: ["sessions:read"], expiresAt });
      expect(key.expiresAt).toBe(stored);
    }
  });

  test("a key cannot mint a key that outlives it", async () => {
    const clock = createManualClock(Date.now());
    const app = testApp({ authToken: MASTER, clock });
    const at = (ms: number) => new Date(clock.now() + ms).toISOString();
    const temporary = await newKey(app, { name: "tmp", scopes: ["admin"], expiresAt: at(3_600_000) });
    for (const expiresAt of [undefined, at(7_200_000)]) {
      const response = await call(app, "POST", "/v1/auth/keys", {
        token: temporary.key,
        body: { name: "forever", scopes: ["admin"], ...(expiresAt ? { expiresAt } : {}) },
      });
      expect([expiresAt, response.status, response.body.code]).toEqual([expiresAt, 403, "FORBIDDEN"]);
      expect(response.body.error).toContain(temporary.expiresAt);
    }
    await newKey(app, { name: "shorter", scopes: ["admin"], expiresAt: at(1_800_000) }, temporary.key);
    await newKey(app, { name: "as-long", scopes: ["admin"], expiresAt: temporary.expiresAt }, temporary.key);
    const lasting = await newKey(app, { name: "lasting", scopes: ["admin"] });
    await newKey(app, { name: "forever", scopes: ["admin"] }, lasting.key);
  });
});

describe("tenant workdirs", () => {
  test("a path outside the tenant's root is refused before it is looked at: no oracle of what exists there", async () => {
    const base = tempDir("ag-attack-oracle-");
    const root = join(base, "root");
    mkdirSync(root);
    writeFileSync(join(base, "a-file"), "");
    const app = testApp({ authToken: MASTER, tenantWorkdirs: { acme: { root } } });
    const acme = (await newKey(app, { name: "acme", scopes: ["*"], tenantId: "acme" })).key;
    for (const workDir of [base, join(base, "missing"), join(base, "a-file")]) {
      const response = await call(app, "POST", "/v1/sessions", { token: acme, body: { workDir } });
      expect([workDir, response.status, response.body.code]).toEqual([workDir, 403, "TENANT_WORKDIR_DENIED"]);
    }
    // Inside its root the usual answers stand.
    const missing = await call(app, "POST", "/v1/sessions", {
      token: acme,
      body: { workDir: join(root, "x") },
    });
    expect([missing.status, missing.body.code]).toEqual([400, "INVALID_WORKDIR"]);
  });
});

describe("rate limits", () => {
  test("an IPv6 host cannot rotate addresses within its /64 to dodge the per-address budgets", async () => {
    const app = testApp({ authToken: MASTER, rateLimitPerMin: 2 });
    const from = async (ip: string, path: string, token?: string) =>
      (
        await app.handle(
          new Request(`http://localhost:9100${path}`, {
            headers: token ? { authorization: `Bearer ${token}` } : {},
          }),
          { ip },
        )
      ).status;
    const host = (n: number) => `2001:db8:1:2:${n.toString(16)}::1`;
    const failures = [];
    for (let n = 0; n < 21; n++) failures.push(await from(host(n), "/v1/sessions", "guess"));
    expect(failures.slice(0, 20).every((s) => s === 401)).toBe(true);
    expect(failures[20]).toBe(429);
    // The same /64 however it is written; another /64 has its own budget.
    expect(await from("2001:0db8:0001:0002:ffff:0:0:7", "/v1/sessions", "guess")).toBe(429);
    expect(await from("2001:db8:1:3::1", "/v1/sessions", "guess")).toBe(401);
    expect(await from(host(99), "/v1/sessions", MASTER)).toBe(200);
    // The audit log's throttle of refusals counts the /64 too: one record each, not one per address.
    const denials = app.audit.list({ limit: 100 }).filter((r) => r.action === "auth.denied");
    expect(denials.map((r) => r.ip)).toEqual(["2001:db8:1:3::1", host(0)]);

    const anonymous = [];
    for (let n = 0; n < 3; n++) anonymous.push(await from(`2001:db8:5:5::${n + 1}`, "/v1/health"));
    expect(anonymous).toEqual([200, 200, 429]);
    // An IPv4 peer seen through an IPv6 socket is the IPv4 address.
    expect(await from("10.1.1.1", "/v1/health")).toBe(200);
    expect(await from("::ffff:10.1.1.1", "/v1/health")).toBe(200);
    expect(await from("10.1.1.1", "/v1/health")).toBe(429);
  });
});

describe("what held", () => {
  test("no path spelling reaches a route around its scope or its tenant check", async () => {
    const app = testApp({ authToken: MASTER });
    const memoryOnly = (await newKey(app, { name: "m", scopes: ["memory:read"] })).key;
    const id = crypto.randomUUID();
    for (const [method, path] of [
      ["GET", "/v1/sessions/"], // trailing slash: the same route
      ["HEAD", "/v1/sessions"], // HEAD is served by GET, and needs what GET needs
      ["GET", `/sessions/${id}/read`], // a legacy alias is rewritten before the guard
      ["GET", "/dashboard/%2e%2e/v1/sessions"], // dot segments are resolved before anything
      ["GET", "/v1/health/../sessions"],
      ["GET", "/v1/sessions?token=x&scope=*"], // the query plays no part
    ] as const) {
      const response = await call(app, method, path, { token: memoryOnly });
      expect([method, path, response.status]).toEqual([method, path, 403]);
    }
    for (const path of ["//v1/sessions", "/V1/SESSIONS", "/v1/%73essions", "/v1/sessions%2F"]) {
      expect([path, (await call(app, "GET", path, { token: memoryOnly })).status]).toEqual([path, 404]);
    }
  });
});
