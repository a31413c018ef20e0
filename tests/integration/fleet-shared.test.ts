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
const LEASE_MS = 1000;
const workDir = tempDir("ag-fleet-shared-work-");

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
  hosts.b = await startTestRuntime(fleetEnv("b"));
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
    const alone = await startTestRuntime({ SVC_IDLE_TIMEOUT_MS: "0" }, { home });
    const made = await callApi<Json>(alone, "POST", "/v1/auth/keys", {
      name: "before",
      scopes: ["sessions:read"],
      tenantId: "acme",
    });
    expect(made.status).toBe(201);
    await stop(alone);
    hosts.a = await startTestRuntime(fleetEnv("a"), { home });
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
