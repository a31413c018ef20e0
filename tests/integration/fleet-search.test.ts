import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { startPostgres, type TestPostgres } from "../helpers/postgres.ts";
import { callApi, startTestRuntime, type TestRuntime } from "../helpers/runtime.ts";
import { tempDir } from "../helpers/temp.ts";
import { until } from "../helpers/until.ts";

// biome-ignore lint/suspicious/noExplicitAny: response bodies are inspected field by field
type Json = Record<string, any>;

/**
 * GET /v1/search in a fleet (docs/search.md, "In a fleet"): three ag runtimes on a real
 * PostgreSQL, each running a headless session of the fake ACP agent with words of its own; a
 * search on any host holds every live host's hits, merged by BM25, each naming its host, with
 * the caller's own tenant and scopes checked on every host; a host gone is named as missing.
 */
const FAKE = join(import.meta.dir, "..", "fakes", "acp-agent.ts");
// Long enough that a host's renewal, late on a saturated machine (three runtimes in one process
// beside other test files), never lets its lease lapse: nothing here waits for a lease to expire
// (a stopped host ends its own at once).
const LEASE_MS = 5000;
const work = tempDir("ag-fleet-search-work-");

let pg: TestPostgres;
const hosts: Record<string, TestRuntime> = {};
const sessions: Record<string, string> = {};

async function startHost(name: string, databaseUrl: string): Promise<void> {
  hosts[name] = await startTestRuntime({
    SVC_FLEET_DATABASE_URL: databaseUrl,
    SVC_FLEET_HOST_NAME: name,
    SVC_FLEET_LEASE_MS: String(LEASE_MS),
    SVC_IDLE_TIMEOUT_MS: "0",
  });
}

/** A headless session on `name` whose first prompt holds `words`, indexed there. */
async function sessionOn(name: string, words: string): Promise<void> {
  const created = await callApi<Json>(hosts[name]!, "POST", "/v1/sessions", {
    workDir: work,
    agent: "gemini",
    driver: "acp",
    agentCommand: [process.execPath, FAKE, "--state", tempDir("ag-fleet-search-fake-")].join(" "),
    prompt: words,
  });
  expect(created.status).toBe(201);
  sessions[name] = created.body.id;
  await until(async () => {
    const found = await search(name, `q=${words.split(" ")[0]}&host=${name}`);
    if (found.status !== 200)
      throw new Error(`search on ${name}: ${found.status} ${JSON.stringify(found.body)}`);
    return found.body.hits.length > 0;
  }, 15_000);
}

async function search(on: string, query: string, token?: string): Promise<{ status: number; body: Json }> {
  const runtime = hosts[on]!;
  const response = await fetch(`${runtime.url}/v1/search?${query}`, {
    headers: { authorization: `Bearer ${token ?? runtime.token()}` },
  });
  return { status: response.status, body: (await response.json()) as Json };
}

beforeAll(async () => {
  pg = await startPostgres();
  const databaseUrl = await pg.database("fleet_search");
  await Promise.all(["a", "b", "c"].map((name) => startHost(name, databaseUrl)));
  await until(async () => {
    const fleet = await callApi<Json>(hosts.a!, "GET", "/v1/fleet");
    return fleet.body.hosts?.filter((h: Json) => h.online).length === 3;
  }, 15_000);
  // "ocelot" is said once on a and three times on b: b's turn ranks first.
  await sessionOn("a", "ocelotgrid once on a");
  await sessionOn("b", "ocelotgrid ocelotgrid ocelotgrid thrice on b");
  await sessionOn("c", "ocelotgrid once on c too");
}, 90_000);

afterAll(async () => {
  for (const [name, id] of Object.entries(sessions))
    await callApi(hosts[name]!, "DELETE", `/v1/sessions/${id}`).catch(() => {});
  for (const runtime of Object.values(hosts)) {
    await runtime.drain(100);
    runtime.close();
  }
  await pg?.stop();
});

describe("search across a fleet", () => {
  test("any host answers with every host's hits, merged by BM25, each naming its host", async () => {
    for (const on of ["a", "c"]) {
      const { status, body } = await search(on, "q=ocelotgrid&role=prompt");
      expect(status).toBe(200);
      // Both at once, so that a failure shows why a host is missing.
      expect({ answered: body.hosts.answered.sort(), missing: body.hosts.missing }).toEqual({
        answered: ["a", "b", "c"],
        missing: [],
      });
      expect(body.hits.map((h: Json) => h.host).sort()).toEqual(["a", "b", "c"]);
      expect(body.hits[0]).toMatchObject({ host: "b", sessionId: sessions.b, origin: "session" });
      const ranks = body.hits.map((h: Json) => h.rank);
      expect(ranks).toEqual([...ranks].sort((x: number, y: number) => x - y));
    }
    // The limit holds over the merge; a host filter asks that host only.
    expect((await search("a", "q=ocelotgrid&role=prompt&limit=1")).body.hits).toHaveLength(1);
    const onlyB = (await search("a", "q=ocelotgrid&host=b")).body;
    expect(new Set(onlyB.hits.map((h: Json) => h.host))).toEqual(new Set(["b"]));
    expect(onlyB.hosts.answered).toEqual(["a", "b"]);
  });

  test("the caller's tenant and scopes are checked on every host", async () => {
    const made = await callApi<Json>(hosts.a!, "POST", "/v1/auth/keys", {
      name: "fleet-search-acme",
      scopes: ["sessions:read"],
      tenantId: "acme",
    });
    expect(made.status).toBe(201);
    const tenant = await search("a", "q=ocelotgrid", made.body.key);
    expect(tenant.status).toBe(200);
    expect(tenant.body.hits).toEqual([]);
    expect({ answered: tenant.body.hosts.answered.sort(), missing: tenant.body.hosts.missing }).toEqual({
      answered: ["a", "b", "c"],
      missing: [],
    });
    // A bad query is refused where it is asked, before any host is: 400, never a 500.
    const bad = await search("a", `q=${encodeURIComponent('"unclosed')}`);
    expect([bad.status, bad.body.code]).toEqual([400, "SEARCH_QUERY_INVALID"]);
  });

  test("a host gone: its hits are missing and the answer names it", async () => {
    await callApi(hosts.c!, "DELETE", `/v1/sessions/${sessions.c}`);
    delete sessions.c;
    await hosts.c!.drain(100);
    hosts.c!.close();
    delete hosts.c;
    // A clean stop ends c's lease at once; each host learns it with the notification.
    await until(async () => {
      const { body } = await search("b", "q=ocelotgrid");
      return body.hosts.missing.some((m: Json) => m.host === "c" && m.reason.startsWith("offline"));
    }, 10_000);
    const { body } = await search("b", "q=ocelotgrid&role=prompt");
    // Both at once, so that a failure shows why a host is missing.
    expect({ answered: body.hosts.answered.sort(), missing: body.hosts.missing }).toEqual({
      answered: ["a", "b"],
      missing: [{ host: "c", reason: expect.stringContaining("offline") }],
    });
    expect(body.hits.map((h: Json) => h.host).sort()).toEqual(["a", "b"]);
  });
});
