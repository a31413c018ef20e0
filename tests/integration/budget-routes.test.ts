import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { callApi, startTestRuntime, type TestRuntime } from "../helpers/runtime.ts";

// biome-ignore lint/suspicious/noExplicitAny: response bodies are inspected field by field
type Json = Record<string, any>;

/**
 * The budget and handoff routes on the real runtime (SQLite file, HTTP on port 0): validation and
 * the error envelope, server and tenant budgets from the config and over the API, who may set
 * them, and Prometheus. Sessions that spend are tests/e2e/budgets.test.ts's (real agents).
 */
let runtime: TestRuntime;
const NO_SESSION = "00000000-0000-4000-8000-000000000000";

beforeAll(async () => {
  runtime = await startTestRuntime({}, { configFile: { budgets: { tenants: { acme: { monthUsd: 2 } } } } });
});
afterAll(() => runtime?.close());

const api = (method: string, path: string, body?: unknown) => callApi<Json>(runtime, method, path, body);

describe("server and tenant budgets", () => {
  test("GET /v1/budgets lists the config's budgets with their spend", async () => {
    const { status, body } = await api("GET", "/v1/budgets");
    expect(status).toBe(200);
    expect(body).toMatchObject({ warnAt: 0.8, interruptAtCap: false, sessions: [] });
    expect(body.scopes).toContainEqual({ budget: "tenant:acme:month", usd: 2, spentUsd: 0, share: 0 });
    expect(body.scopes).toContainEqual({ budget: "server:day", usd: null, spentUsd: 0, share: 0 });
  });

  test("PUT /v1/budgets/:scope sets one over the config (null: none); Prometheus shows it", async () => {
    expect(await api("PUT", "/v1/budgets/server:day", { usd: 10 })).toMatchObject({
      status: 200,
      body: { budget: "server:day", usd: 10, spentUsd: 0, share: 0 },
    });
    expect((await api("PUT", "/v1/budgets/tenant:acme:month", { usd: null })).body.usd).toBeNull();
    const listed = (await api("GET", "/v1/budgets")).body.scopes as Json[];
    expect(listed.find((s) => s.budget === "tenant:acme:month")!.usd).toBeNull();
    const metrics = await fetch(`${runtime.url}/metrics`, {
      headers: { authorization: `Bearer ${runtime.token()}` },
    }).then((r) => r.text());
    expect(metrics).toContain('ag_budget_limit_usd{budget="server:day"} 10');
    expect(metrics).toContain('ag_budget_sessions{state="reached"} 0');
  });

  test.each([
    ["/v1/budgets/galaxy:year", { usd: 1 }],
    ["/v1/budgets/server:week", { usd: 1 }],
    ["/v1/budgets/server:day", { usd: -1 }],
    ["/v1/budgets/server:day", { usd: "ten" }],
    ["/v1/budgets/server:day", {}],
    ["/v1/budgets/server:day", { usd: 1, extra: true }],
  ])("PUT %p %p is a 400 with the envelope", async (path, body) => {
    const answer = await api("PUT", path, body);
    expect(answer.status).toBe(400);
    expect(answer.body).toMatchObject({ code: "VALIDATION_ERROR", statusCode: 400 });
    expect(typeof answer.body.error).toBe("string");
  });

  test("a tenant's key may not set server or tenant budgets (admin), and sees only its sessions' budgets", async () => {
    const key = await api("POST", "/v1/auth/keys", {
      name: "acme",
      scopes: ["sessions:read", "sessions:write"],
      tenantId: "acme",
    });
    expect(key.status).toBe(201);
    const asAcme = (method: string, path: string, body?: unknown) =>
      fetch(`${runtime.url}${path}`, {
        method,
        headers: { authorization: `Bearer ${key.body.key}`, "content-type": "application/json" },
        body: body === undefined ? undefined : JSON.stringify(body),
      }).then(async (r) => ({ status: r.status, body: (await r.json()) as Json }));
    expect(await asAcme("PUT", "/v1/budgets/tenant:acme:month", { usd: 100 })).toMatchObject({
      status: 403,
      body: { code: "FORBIDDEN" },
    });
    expect(await asAcme("GET", "/v1/budgets")).toMatchObject({ status: 200, body: { sessions: [] } });
  });
});

describe("a session's budget and handoff routes", () => {
  test.each([
    ["GET", `/v1/sessions/${NO_SESSION}/budget`, undefined],
    ["POST", `/v1/sessions/${NO_SESSION}/budget`, { usd: 1 }],
    ["POST", `/v1/sessions/${NO_SESSION}/budget/stop`, undefined],
    ["POST", `/v1/sessions/${NO_SESSION}/handoff`, { agent: "codex" }],
  ])("%s %s of no session is a 404 SESSION_NOT_FOUND", async (method, path, body) => {
    expect(await api(method, path, body)).toMatchObject({
      status: 404,
      body: { code: "SESSION_NOT_FOUND", statusCode: 404 },
    });
  });

  test.each([
    [`/v1/sessions/${NO_SESSION}/budget`, {}],
    [`/v1/sessions/${NO_SESSION}/budget`, { usd: -0.5 }],
    [`/v1/sessions/${NO_SESSION}/budget`, { usd: 1, tokens: 1.5 }],
    [`/v1/sessions/${NO_SESSION}/handoff`, {}],
    [`/v1/sessions/${NO_SESSION}/handoff`, { agent: "Not An Agent" }],
    [`/v1/sessions/${NO_SESSION}/handoff`, { agent: "codex", driver: "ssh" }],
    [`/v1/sessions/${NO_SESSION}/handoff`, { agent: "codex", note: "" }],
  ])("POST %s %p is a 400 with the envelope", async (path, body) => {
    expect(await api("POST", path, body)).toMatchObject({
      status: 400,
      body: { code: "VALIDATION_ERROR", statusCode: 400 },
    });
  });

  test("a create's budget is validated with the rest of the body", async () => {
    const answer = await api("POST", "/v1/sessions", { workDir: runtime.stateDir, budget: { usd: "lots" } });
    expect(answer).toMatchObject({ status: 400, body: { code: "VALIDATION_ERROR" } });
  });
});
