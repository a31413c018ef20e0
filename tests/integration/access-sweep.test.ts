import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { SCOPES, type Scope } from "../../src/auth/scopes.ts";
import type { Runtime } from "../../src/runtime.ts";
import { ROUTE_SCOPES, requiredScope } from "../../src/server/routes/scopes.ts";
import { call } from "../helpers/access.ts";
import { startTestRuntime } from "../helpers/runtime.ts";

// biome-ignore lint/suspicious/noExplicitAny: response bodies are inspected field by field
type Json = Record<string, any>;

/**
 * Walks the route table of the real runtime (every plugin production wires) and shows each route
 * closed to strangers and to keys without its scope. Nothing here is listed by hand: a route added
 * tomorrow is swept tomorrow.
 */
const MASTER = "sweep-master-token";
let runtime: Runtime;
let routes: Array<{ method: string; path: string }>;

beforeAll(async () => {
  runtime = await startTestRuntime({ SVC_AUTH_TOKEN: MASTER, SVC_RATE_LIMIT_PER_MIN: "0" });
  routes = runtime.app
    .routes()
    .map((r) => ({ method: r.method, path: r.path }))
    .filter((r) => r.method !== "HEAD");
});
afterAll(() => runtime?.close());

/** A concrete URL for a route pattern. */
function urlOf(path: string): string {
  return path
    .replace(":id", crypto.randomUUID())
    .replace(":event", "Stop")
    .replace(":channel", "webhook")
    .replace("*", "some-key");
}

/**
 * One request through the runtime's own HTTP handler, each from an address of its own: the
 * sweep fails on purpose hundreds of times, which from one address would be slowed to 429s.
 */
let address = 0;
async function hit(method: string, path: string, token?: string): Promise<{ status: number; body: Json }> {
  address++;
  const request = new Request(`${runtime.url}${urlOf(path)}`, {
    method,
    headers: {
      ...(token ? { authorization: `Bearer ${token}` } : {}),
      ...(method === "GET" ? {} : { "content-type": "application/json" }),
    },
    body: method === "GET" ? undefined : JSON.stringify({ session_id: crypto.randomUUID() }),
  });
  const response = await runtime.app.handle(request, {
    ip: `10.${address >> 16}.${(address >> 8) & 255}.${address & 255}`,
  });
  const type = response.headers.get("content-type") ?? "";
  if (!type.includes("json")) {
    await response.body?.cancel();
    return { status: response.status, body: {} };
  }
  return { status: response.status, body: await response.json() };
}

async function newKey(scopes: Scope[], tenantId?: string): Promise<string> {
  const response = await fetch(`${runtime.url}/v1/auth/keys`, {
    method: "POST",
    headers: { authorization: `Bearer ${MASTER}`, "content-type": "application/json" },
    body: JSON.stringify({ name: `sweep-${scopes.join("+")}`, scopes, ...(tenantId ? { tenantId } : {}) }),
  });
  expect(response.status).toBe(201);
  return ((await response.json()) as Json).key;
}

const isPublic = (path: string) => {
  const rule = ROUTE_SCOPES[path];
  return rule !== undefined && "kind" in rule && rule.kind === "public";
};

describe("the route table, swept", () => {
  test("every route has a scope entry, and the table names no route that does not exist", () => {
    expect(routes.length).toBeGreaterThan(50);
    for (const route of routes)
      expect([route.path, ROUTE_SCOPES[route.path] !== undefined]).toEqual([route.path, true]);
    const paths = new Set(routes.map((r) => r.path));
    expect(Object.keys(ROUTE_SCOPES).filter((p) => !paths.has(p))).toEqual([]);
  });

  test("every route but health and the dashboard's shell refuses no token and a wrong token with a 401 envelope", async () => {
    for (const { method, path } of routes) {
      if (isPublic(path)) continue;
      for (const token of [undefined, "wrong-token", `${MASTER}x`]) {
        const { status, body } = await hit(method, path, token);
        expect([method, path, status, body.code, body.statusCode]).toEqual([
          method,
          path,
          401,
          "UNAUTHORIZED",
          401,
        ]);
      }
    }
    expect((await hit("GET", "/v1/health")).status).toBe(200);
  });

  test("every scoped route refuses a key that holds every scope but its own, naming the scope", async () => {
    const keyWithout = new Map<Scope, string>();
    for (const { method, path } of routes) {
      const needed = requiredScope(path, method);
      if (needed === null) continue;
      if (!keyWithout.has(needed)) {
        keyWithout.set(needed, await newKey(SCOPES.filter((s) => s !== needed && s !== "*")));
      }
      const { status, body } = await hit(method, path, keyWithout.get(needed));
      expect([method, path, status, body.code]).toEqual([method, path, 403, "FORBIDDEN"]);
      expect(body.error).toContain(needed);
    }
    // Every scope but `*` is needed somewhere.
    expect([...keyWithout.keys()].sort()).toEqual(SCOPES.filter((s) => s !== "*").sort());
  });

  test("a key with the scope gets past the check (whatever the route then says)", async () => {
    const all = await newKey(["*"]);
    for (const { method, path } of routes) {
      if (isPublic(path) || path.startsWith("/v1/hooks/")) continue;
      const { status } = await hit(method, path, all);
      expect([method, path, status === 401 || status === 403]).toEqual([method, path, false]);
    }
  });

  test("server-wide views are closed to a tenant's key", async () => {
    const tenant = await newKey(["*"], "acme");
    for (const path of ["/v1/metrics", "/metrics", "/v1/swarm", "/v1/pipelines"]) {
      const { status, body } = await hit("GET", path, tenant);
      expect([path, status, body.code]).toEqual([path, 403, "FORBIDDEN"]);
    }
  });
});

/**
 * An attack that once got through (the others are in tests/unit/access-attacks.test.ts): a
 * tenant's admin key on the server's own machinery, over every admin route of the real runtime.
 */
describe("tenant keys and the server's own machinery", () => {
  test("a tenant's admin key gets no look at the audit log, diagnostics, channels or dead letters", async () => {
    const runtime = await startTestRuntime({ SVC_AUTH_TOKEN: MASTER, SVC_RATE_LIMIT_PER_MIN: "0" });
    try {
      const key = async (body: Json) => {
        const response = await call(runtime.app, "POST", "/v1/auth/keys", { token: MASTER, body });
        return response.body.key as string;
      };
      const tenantAdmin = await key({ name: "acme-admin", scopes: ["*"], tenantId: "acme" });
      const admin = await key({ name: "admin", scopes: ["admin"] });
      // Every admin route but the keys (which a tenant's admin manages for its own tenant).
      const machinery = runtime.app
        .routes()
        .filter((r) => r.method !== "HEAD" && !r.path.startsWith("/v1/auth/"))
        .filter((r) => requiredScope(r.path, r.method) === "admin");
      expect(machinery.map((r) => r.path)).toContain("/v1/audit");
      for (const { method, path } of machinery) {
        const url = path.replace(":channel", "webhook");
        const { status, body } = await call(runtime.app, method, url, { token: tenantAdmin });
        expect([method, path, status, body.code]).toEqual([method, path, 403, "FORBIDDEN"]);
        expect(body.error).toContain("server-wide");
      }
      expect((await call(runtime.app, "GET", "/v1/audit", { token: admin })).status).toBe(200);
      expect((await call(runtime.app, "GET", "/v1/audit/", { token: tenantAdmin })).status).toBe(403);
    } finally {
      await runtime.close();
    }
  });
});
