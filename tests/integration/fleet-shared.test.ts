import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { createApiClient } from "../../src/cli/client.ts";
import { createMcpServer } from "../../src/mcp/server.ts";
import { startPostgres, type TestPostgres } from "../helpers/postgres.ts";
import { callApi, startTestRuntime, type TestRuntime } from "../helpers/runtime.ts";
import { tempDir } from "../helpers/temp.ts";
import { until } from "../helpers/until.ts";

// biome-ignore lint/suspicious/noExplicitAny: response bodies are inspected field by field
type Json = Record<string, any>;

/**
 * What two fleet members share beyond sessions (docs/fleet.md): API keys made before a host
 * joined, and the MCP face's placement. Two ag runtimes on a real PostgreSQL of the test's own;
 * no agent CLI runs (tests/e2e/fleet.test.ts has the real one).
 */
// Long enough that a host's renewal, late on a saturated machine (three runtimes in one process
// beside other test files), never lets its lease lapse: nothing here waits for a lease to expire
// (a stopped host ends its own at once).
const LEASE_MS = 5000;
const SLEEPER = "sh -c 'sleep 600'";
const workDir = tempDir("ag-fleet-shared-work-");
/** Tenant acme's folders, defined in a's configuration only. */
const tenantRoot = tempDir("ag-fleet-shared-acme-");

let pg: TestPostgres;
let databaseUrl: string;
const hosts: Record<string, TestRuntime> = {};

const fleetEnv = (name: string) => ({
  SVC_FLEET_DATABASE_URL: databaseUrl,
  SVC_FLEET_HOST_NAME: name,
  SVC_FLEET_LEASE_MS: String(LEASE_MS),
  SVC_IDLE_TIMEOUT_MS: "0",
});

async function stop(runtime: TestRuntime): Promise<void> {
  await runtime.drain(100);
  runtime.close();
}

beforeAll(async () => {
  pg = await startPostgres();
  databaseUrl = await pg.database("fleet_shared_it");
  // b reaps expired memory every second; a keeps the default (an hour).
  hosts.b = await startTestRuntime(fleetEnv("b"), {
    configFile: { memoryBridge: { enabled: true, persistPath: null, reaperIntervalMs: 1000 } },
  });
}, 60_000);

afterAll(async () => {
  for (const runtime of Object.values(hosts)) await stop(runtime);
  await pg?.stop();
});

const api = (host: string, method: string, path: string, body?: unknown) =>
  callApi<Json>(hosts[host]!, method, path, body);

describe("keys made before a host joined", () => {
  test("are published at the join: a's key from before works on b, with its tenant and scopes; revoked on a, refused on b", async () => {
    const home = tempDir("ag-fleet-shared-home-");
    const configFile = { tenantWorkdirs: { acme: { root: tenantRoot } } };
    const alone = await startTestRuntime({ SVC_IDLE_TIMEOUT_MS: "0" }, { home, configFile });
    const made = await callApi<Json>(alone, "POST", "/v1/auth/keys", {
      name: "before",
      scopes: ["sessions:read"],
      tenantId: "acme",
    });
    expect(made.status).toBe(201);
    await stop(alone);
    hosts.a = await startTestRuntime(fleetEnv("a"), { home, configFile });
    const as = (host: string, method: string, path: string) =>
      callApi<Json>({ url: hosts[host]!.url, token: () => made.body.key }, method, path);
    await until(async () => (await as("b", "GET", "/v1/sessions")).status === 200, 5_000);
    expect((await as("b", "GET", "/v1/sessions")).body).toEqual([]);
    const denied = await as("b", "POST", "/v1/sessions");
    expect([denied.status, denied.body.code]).toEqual([403, "FORBIDDEN"]);
    // Only its hash is in the fleet database.
    const sql = new Bun.SQL(databaseUrl);
    try {
      const rows = await sql`SELECT host, hash, data FROM fleet_keys WHERE id = ${made.body.id}`;
      expect(rows.map((r: Json) => r.host)).toEqual(["a"]);
      expect(JSON.stringify(rows)).not.toContain(made.body.key);
    } finally {
      await sql.close();
    }
    expect((await api("a", "DELETE", `/v1/auth/keys/${made.body.id}`)).status).toBe(200);
    await until(async () => (await as("b", "GET", "/v1/sessions")).status === 401, 5_000);
  });
});

describe("MCP create_session with host", () => {
  test("through b's API, the session lands on the named host (a)", async () => {
    const b = hosts.b!;
    const server = createMcpServer({
      api: createApiClient({ baseUrl: b.url, token: b.token() }),
      version: "0",
    });
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    const client = new Client({ name: "fleet-shared-test", version: "1.0.0" });
    await Promise.all([server.connect(serverSide), client.connect(clientSide)]);
    try {
      const result = (await client.callTool({
        name: "create_session",
        arguments: { name: "via-mcp", workDir, host: "a" },
      })) as Json;
      expect(result.isError).toBeUndefined();
      const id = result.structuredContent.id as string;
      const onA = (await api("a", "GET", "/v1/sessions?host=a")).body as Json[];
      expect(onA.find((s) => s.id === id)).toMatchObject({ host: "a", name: "via-mcp" });
      // Its agent CLI is not installed here: the window may already be gone, and the session with it.
      await api("a", "DELETE", `/v1/sessions/${id}`);
    } finally {
      await client.close();
    }
  });
});

describe("templates", () => {
  test("one made on a is used by a create on b; its name is taken on b too", async () => {
    const made = await api("a", "POST", "/v1/templates", { name: "shared", workDir, agentCommand: SLEEPER });
    expect(made.status).toBe(201);
    const id = made.body.id as string;
    await until(async () => (await api("b", "GET", `/v1/templates/${id}`)).status === 200, 5_000);
    const created = await api("b", "POST", "/v1/sessions", { name: "from-template", templateId: id });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ workDir, agentCommand: SLEEPER });
    const local = (await api("b", "GET", "/v1/sessions?host=b")).body as Json[];
    expect(local.map((s) => s.id)).toContain(created.body.id);
    const twin = await api("b", "POST", "/v1/templates", { name: "shared", workDir });
    expect([twin.status, twin.body.code]).toEqual([409, "CONFLICT"]);
    expect((await api("b", "DELETE", `/v1/sessions/${created.body.id}`)).status).toBe(200);
    expect((await api("b", "DELETE", `/v1/templates/${id}`)).status).toBe(200);
    await until(async () => (await api("a", "GET", `/v1/templates/${id}`)).status === 404, 5_000);
  });
});

describe("a template name two hosts take at once", () => {
  test("the database settles it: the host that wrote second drops its template and says so", async () => {
    // Another host's row that a has not heard of yet (written without a notification).
    const first = { id: "raced-first", name: "raced", workDir, createdAt: "2026-01-01T00:00:00.000Z" };
    const sql = new Bun.SQL(databaseUrl);
    try {
      await sql`INSERT INTO fleet_templates (id, name, data) VALUES (${first.id}, ${first.name}, ${JSON.stringify({ ...first, updatedAt: first.createdAt })})`;
    } finally {
      await sql.close();
    }
    const second = await api("a", "POST", "/v1/templates", { name: "raced", workDir });
    expect(second.status).toBe(201);
    await until(async () => (await api("a", "GET", `/v1/templates/${second.body.id}`)).status === 404, 5_000);
    const dropped = `(${second.body.id}) was dropped: another host made one of that name first`;
    expect(hosts.a!.logs.some((l) => l.includes(dropped))).toBe(true);
    // The first host's notification, late as in a race: a then has the template that won.
    const late = new Bun.SQL(databaseUrl);
    try {
      await late`SELECT pg_notify('ag_fleet', ${`t:${first.id}`})`;
    } finally {
      await late.close();
    }
    await until(
      async () => (await api("a", "GET", `/v1/templates/${first.id}`)).body.name === "raced",
      5_000,
    );
    expect((await api("a", "DELETE", `/v1/templates/${first.id}`)).status).toBe(200);
  });
});

describe("memory", () => {
  const path = (key: string) => `/v1/memory/${encodeURIComponent(key)}`;

  test("an entry set on a is read on b; replaced on b, a reads the new value", async () => {
    expect((await api("a", "POST", "/v1/memory", { key: "team/goal", value: "ship" })).status).toBe(201);
    await until(async () => (await api("b", "GET", path("team/goal"))).body.value === "ship", 5_000);
    const replaced = await api("b", "POST", "/v1/memory", { key: "team/goal", value: "ship twice" });
    expect(replaced.status).toBe(200);
    await until(async () => (await api("a", "GET", path("team/goal"))).body.value === "ship twice", 5_000);
    expect((await api("b", "GET", "/v1/memories?scope=team")).body.map((e: Json) => e.key)).toContain(
      "team/goal",
    );
  });

  test("an entry's TTL holds on every host, and a reaper removes it from the fleet database", async () => {
    const set = await api("a", "POST", "/v1/memory", {
      key: "team/brief",
      value: "soon gone",
      ttlSeconds: 3,
    });
    expect(set.status).toBe(201);
    expect(set.body.expiresAt).not.toBeNull();
    // Seen on b (its notification takes milliseconds), until it expires there too.
    await until(async () => (await api("b", "GET", path("team/brief"))).status === 200, 2_500);
    await until(async () => (await api("b", "GET", path("team/brief"))).status === 404, 5_000);
    expect((await api("a", "GET", path("team/brief"))).status).toBe(404);
    const sql = new Bun.SQL(databaseUrl);
    try {
      await until(
        async () => (await sql`SELECT key FROM fleet_memory WHERE key = 'team/brief'`).length === 0,
        5_000,
      );
    } finally {
      await sql.close();
    }
  });
});

describe("tenants", () => {
  test("a tenant defined in a's configuration confines its key on b the same", async () => {
    const key = (
      await api("a", "POST", "/v1/auth/keys", {
        name: "acme-writer",
        scopes: ["sessions:read", "sessions:write"],
        tenantId: "acme",
      })
    ).body.key as string;
    const asB = (body: Json) =>
      callApi<Json>({ url: hosts.b!.url, token: () => key }, "POST", "/v1/sessions", body);
    await until(async () => (await asB({ workDir, agentCommand: SLEEPER })).status !== 401, 5_000);
    const outside = await asB({ workDir, agentCommand: SLEEPER });
    expect([outside.status, outside.body.code]).toEqual([403, "TENANT_WORKDIR_DENIED"]);
    const inside = await asB({ workDir: tenantRoot, agentCommand: SLEEPER });
    expect(inside.status).toBe(201);
    expect(inside.body.tenantId).toBe("acme");
    await api("b", "DELETE", `/v1/sessions/${inside.body.id}`);
  });
});

describe("the fleet database stopped and started", () => {
  test("a memory entry and a template written on a meanwhile reach b once it is back", async () => {
    await pg.stop();
    await until(async () => (await api("a", "GET", "/v1/health")).body.fleet.connected === false, 10_000);
    expect((await api("a", "POST", "/v1/memory", { key: "team/offline", value: "kept" })).status).toBe(201);
    expect((await api("a", "GET", "/v1/memory/team%2Foffline")).body.value).toBe("kept");
    const template = await api("a", "POST", "/v1/templates", { name: "offline", workDir });
    expect(template.status).toBe(201);
    await pg.start();
    await until(async () => (await api("a", "GET", "/v1/health")).body.fleet.connected === true, 15_000);
    await until(
      async () => (await api("b", "GET", "/v1/memory/team%2Foffline")).body.value === "kept",
      15_000,
    );
    await until(
      async () => (await api("b", "GET", `/v1/templates/${template.body.id}`)).status === 200,
      15_000,
    );
    // a's copy is still there after its join read everything again.
    expect((await api("a", "GET", "/v1/memory/team%2Foffline")).body.value).toBe("kept");
  }, 60_000);
});
