import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { SQL } from "bun";
import { ag, cliEnv } from "../helpers/cli.ts";
import { startPostgres, type TestPostgres } from "../helpers/postgres.ts";
import { callApi, startTestRuntime, type TestRuntime } from "../helpers/runtime.ts";
import { type SseMessage, sseReader } from "../helpers/sse.ts";
import { tempDir } from "../helpers/temp.ts";
import { openTerminal } from "../helpers/terminal.ts";
import { until } from "../helpers/until.ts";

// biome-ignore lint/suspicious/noExplicitAny: response bodies are inspected field by field
type Json = Record<string, any>;

/**
 * Three ag runtimes (each its own SQLite file, tmux socket, HTTP port and token) joined into one
 * fleet on a real PostgreSQL server of the test's own. Their agents are `sleep`s: what is under
 * test is the fleet (membership, publication, reads, forwarding, placement, outages), not an
 * agent CLI (tests/e2e/fleet.test.ts has the real one).
 */
const MB = 1024 * 1024;
const SLEEPER = "sh -c 'sleep 600'";
// Long enough that a live host's heartbeat never lapses on a loaded machine (the fleet's other
// integration files use 5 s); the lease-expiry test waits for a ghost host's lease of the same length.
const LEASE_MS = 3000;
const workDir = tempDir("ag-fleet-work-");

let pg: TestPostgres;
let databaseUrl: string;
const hosts: Record<string, TestRuntime> = {};

async function startHost(name: string, availableMb: number): Promise<TestRuntime> {
  const runtime = await startTestRuntime(
    {
      SVC_FLEET_DATABASE_URL: databaseUrl,
      SVC_FLEET_HOST_NAME: name,
      SVC_FLEET_LEASE_MS: String(LEASE_MS),
      SVC_MEMORY_RESERVE_MB: "100",
      SVC_IDLE_TIMEOUT_MS: "0",
    },
    { hostMemory: async () => availableMb * MB },
  );
  hosts[name] = runtime;
  return runtime;
}

beforeAll(async () => {
  pg = await startPostgres();
  databaseUrl = await pg.database("fleet_it");
  await Promise.all([startHost("a", 8000), startHost("b", 2000), startHost("c", 4000)]);
}, 60_000);

afterAll(async () => {
  for (const runtime of Object.values(hosts)) {
    for (const s of (await callApi<Json[]>(runtime, "GET", "/v1/sessions?status=running")).body)
      if (s.host === undefined || s.hostOnline) await callApi(runtime, "DELETE", `/v1/sessions/${s.id}`);
  }
  for (const runtime of Object.values(hosts)) {
    await runtime.drain(100);
    runtime.close();
  }
});

const api = (host: string, method: string, path: string, body?: unknown) =>
  callApi<Json>(hosts[host]!, method, path, body);
const list = async (host: string, query = "") =>
  (await api(host, "GET", `/v1/sessions${query}`)).body as Json[];
const seenOn = (host: string, id: string) => async () => (await list(host)).some((s) => s.id === id);
/** A new session `name` (a sleeper) on a, once c lists it: its id. */
async function sleeperSeenOnC(name: string): Promise<string> {
  const created = await api("a", "POST", "/v1/sessions", {
    name,
    workDir,
    agentCommand: SLEEPER,
    reuse: false,
  });
  const id = created.body.id as string;
  await until(seenOn("c", id), 5_000);
  return id;
}

describe("membership", () => {
  test("every host lists the three, online, with its admission figures; health says connected", async () => {
    for (const name of ["a", "b", "c"]) {
      const fleet = (await api(name, "GET", "/v1/fleet")).body;
      expect(fleet).toMatchObject({ host: name, connected: true, leaseMs: LEASE_MS });
      expect(fleet.hosts.map((h: Json) => [h.name, h.online, h.self])).toEqual([
        ["a", true, name === "a"],
        ["b", true, name === "b"],
        ["c", true, name === "c"],
      ]);
      const health = (await api(name, "GET", "/v1/health")).body;
      expect(health.fleet).toEqual({ host: name, connected: true, error: null });
    }
    const a = (await api("c", "GET", "/v1/fleet")).body.hosts.find((h: Json) => h.name === "a");
    expect(a).toMatchObject({ availableMb: 8000, reserveMb: 100, headroomMb: 7900 });
    expect(a.secret).toBeUndefined();
  });
});

describe("a session created through b on a", () => {
  let id: string;

  test("named: it runs on a, and c lists and reads it with host and hostOnline", async () => {
    const created = await api("b", "POST", "/v1/sessions", {
      name: "named",
      workDir,
      agentCommand: SLEEPER,
      host: "a",
    });
    expect(created.status).toBe(201);
    expect(created.headers.get("x-ag-fleet-host")).toBe("a");
    id = created.body.id;
    expect((await list("a")).find((s) => s.id === id)).toMatchObject({ host: "a", hostOnline: true });
    await until(seenOn("c", id), 5_000);
    expect((await list("c", "?host=a")).map((s) => s.id)).toContain(id);
    expect((await list("c", "?host=b")).map((s) => s.id)).not.toContain(id);
    const one = await api("c", "GET", `/v1/sessions/${id}`);
    expect(one.body).toMatchObject({ id, name: "named", host: "a", hostOnline: true, workDir });
  });

  test("an action on c is forwarded to a and answers as a does", async () => {
    const read = await api("c", "GET", `/v1/sessions/${id}/read`);
    expect(read.status).toBe(200);
    expect(read.headers.get("x-ag-fleet-host")).toBe("a");
    const killed = await api("c", "DELETE", `/v1/sessions/${id}`);
    expect([killed.status, killed.body.status]).toEqual([200, "killed"]);
    expect((await api("a", "GET", `/v1/sessions/${id}`)).body.status).toBe("killed");
    await until(async () => (await api("b", "GET", `/v1/sessions/${id}`)).body.status === "killed", 5_000);
  });

  test("auto: the live host with the most headroom that has the workDir (a)", async () => {
    const created = await api("c", "POST", "/v1/sessions", {
      name: "auto",
      workDir,
      agentCommand: SLEEPER,
      host: "auto",
    });
    expect(created.status).toBe(201);
    expect((await list("a", "?host=a")).map((s) => s.id)).toContain(created.body.id);
    await api("c", "DELETE", `/v1/sessions/${created.body.id}`);
  });

  test("auto with a workDir no host has: 400 INVALID_WORKDIR; an unknown host: 400", async () => {
    const missing = await api("b", "POST", "/v1/sessions", {
      workDir: `${workDir}/nowhere`,
      agentCommand: SLEEPER,
      host: "auto",
    });
    expect([missing.status, missing.body.code]).toEqual([400, "INVALID_WORKDIR"]);
    const unknown = await api("b", "POST", "/v1/sessions", { workDir, agentCommand: SLEEPER, host: "zz" });
    expect([unknown.status, unknown.body.code]).toEqual([400, "VALIDATION_ERROR"]);
  });
});

describe("a caller's own key, checked as if the session were local", () => {
  test("a tenant's key on c neither lists, reads nor acts on a's untenanted session; a read-only key cannot act", async () => {
    const id = await sleeperSeenOnC("untenanted");
    const key = async (body: Json) => (await api("c", "POST", "/v1/auth/keys", body)).body.key as string;
    const tenant = await key({ name: "acme", scopes: ["sessions:read", "sessions:write"], tenantId: "acme" });
    const reader = await key({ name: "reader", scopes: ["sessions:read"] });
    const as = (token: string, method: string, path: string) =>
      callApi<Json>({ url: hosts.c!.url, token: () => token }, method, path);
    expect((await as(tenant, "GET", "/v1/sessions")).body.map((s: Json) => s.id)).not.toContain(id);
    for (const [method, path] of [
      ["GET", `/v1/sessions/${id}`],
      ["GET", `/v1/sessions/${id}/read`],
      ["POST", `/v1/sessions/${id}/interrupt`],
    ] as const) {
      const refused = await as(tenant, method, path);
      expect([refused.status, refused.body.code]).toEqual([404, "SESSION_NOT_FOUND"]);
    }
    expect((await as(reader, "GET", `/v1/sessions/${id}/read`)).status).toBe(200);
    const denied = await as(reader, "DELETE", `/v1/sessions/${id}`);
    expect([denied.status, denied.body.code]).toEqual([403, "FORBIDDEN"]);
    expect((await api("a", "GET", `/v1/sessions/${id}`)).body.status).not.toBe("killed");
    await api("a", "DELETE", `/v1/sessions/${id}`);
  });
});

describe("API keys", () => {
  test("a key made on a works on c, with its tenant and scopes; revoked on a, refused on c", async () => {
    const made = await api("a", "POST", "/v1/auth/keys", {
      name: "everywhere",
      scopes: ["sessions:read"],
      tenantId: "acme",
    });
    expect(made.status).toBe(201);
    const as = (host: string, method: string, path: string) =>
      callApi<Json>({ url: hosts[host]!.url, token: () => made.body.key }, method, path);
    await until(async () => (await as("c", "GET", "/v1/sessions")).status === 200, 5_000);
    // Its tenant's sessions only (none), and no more than its scopes.
    expect((await as("c", "GET", "/v1/sessions")).body).toEqual([]);
    const denied = await as("c", "POST", "/v1/sessions");
    expect([denied.status, denied.body.code]).toEqual([403, "FORBIDDEN"]);
    // An SSE token minted on c with it opens c's stream.
    const minted = await as("c", "POST", "/v1/auth/sse-token");
    expect(minted.status).toBe(201);
    const stream = await fetch(`${hosts.c!.url}/v1/events?token=${minted.body.token}`);
    expect(stream.status).toBe(200);
    await stream.body?.cancel();
    // Not c's to revoke; revoked where it was made, refused everywhere.
    expect((await api("c", "DELETE", `/v1/auth/keys/${made.body.id}`)).status).toBe(404);
    expect((await api("a", "DELETE", `/v1/auth/keys/${made.body.id}`)).status).toBe(200);
    // Each host applies the revocation when its notification arrives: c and b each in its own time.
    await until(async () => (await as("c", "GET", "/v1/sessions")).status === 401, 5_000);
    await until(async () => (await as("b", "GET", "/v1/sessions")).status === 401, 5_000);
  });
});

describe("the CLI", () => {
  test("ag fleet names the hosts (this one marked); ag list shows a HOST column and filters by --host", async () => {
    const c = hosts.c!;
    const port = new URL(c.url).port;
    const env = cliEnv({ stateDir: c.stateDir });
    const id = await sleeperSeenOnC("listed");
    const [fleet, listed, onB] = await Promise.all([
      ag(["fleet", "--port", port], undefined, env),
      ag(["list", "--port", port], undefined, env),
      ag(["list", "--host", "b", "--port", port], undefined, env),
    ]);
    expect(fleet.exitCode).toBe(0);
    expect(fleet.stdout).toMatch(/^HOST\s+ONLINE\s+HEARTBEAT\s+HEADROOM\s+RUNNING\s+SESSIONS\s+URL$/m);
    expect(fleet.stdout).toMatch(/^a\s+yes\s+\S+ ago\s+7900 MB\s/m);
    expect(fleet.stdout).toMatch(/^c \(this\)\s+yes\s/m);
    expect(listed.stdout).toMatch(/^ID\s+NAME\s+HOST\s+AGENT/m);
    expect(listed.stdout).toMatch(new RegExp(`^${id.slice(0, 8)}\\s+listed\\s+a\\s`, "m"));
    expect(onB.stdout).not.toContain("listed");
    await api("a", "DELETE", `/v1/sessions/${id}`);
  });

  test("outside a fleet: ag fleet says so (FEATURE_DISABLED), ag list has no HOST column", async () => {
    const single = await startTestRuntime({ SVC_IDLE_TIMEOUT_MS: "0" });
    const port = new URL(single.url).port;
    const env = cliEnv({ stateDir: single.stateDir });
    const created = await callApi<Json>(single, "POST", "/v1/sessions", { workDir, agentCommand: SLEEPER });
    const [fleet, listed] = await Promise.all([
      ag(["fleet", "--port", port], undefined, env),
      ag(["list", "--port", port], undefined, env),
    ]);
    expect(fleet.exitCode).not.toBe(0);
    expect(fleet.stderr).toContain(
      "this ag is not in a fleet (fleet.databaseUrl is not set) [FEATURE_DISABLED]",
    );
    expect(listed.stdout).toMatch(/^ID\s+NAME\s+AGENT/m);
    expect((await callApi<Json>(single, "GET", "/v1/health")).body.fleet).toBeUndefined();
    await callApi(single, "DELETE", `/v1/sessions/${created.body.id}`);
    await single.drain(100);
    single.close();
  });
});

describe("what changes without an event", () => {
  test("a session's token counts, and its removal (pruned), reach the other hosts with the next renewal", async () => {
    const id = await sleeperSeenOnC("quiet");
    // As the transcript's usage lines do: the record changes, no event is published.
    hosts.a!.db.run("UPDATE sessions SET token_input = 4321 WHERE id = ?", [id]);
    await until(
      async () => (await api("c", "GET", `/v1/sessions/${id}`)).body.tokenUsage?.input === 4321,
      5_000,
    );
    await api("a", "DELETE", `/v1/sessions/${id}`);
    hosts.a!.db.run("DELETE FROM sessions WHERE id = ?", [id]);
    await until(async () => !(await seenOn("c", id)()), 5_000);
  });
});

describe("another host's live terminal", () => {
  test("c relays a's terminal WebSocket: the snapshot, control, and keystrokes echoed back", async () => {
    const id = await sleeperSeenOnC("terminal");
    const c = hosts.c!;
    const url = `${c.url.replace(/^http/, "ws")}/v1/sessions/${id}/terminal`;
    const terminal = await openTerminal(url, { authorization: `Bearer ${c.token()}` });
    await terminal.until((t) => t.texts().some((m) => m.type === "snapshot"));
    terminal.send({ type: "control" });
    await terminal.until((t) => t.texts().some((m) => m.type === "control" && m.granted === true));
    terminal.send({ type: "input", data: "relayed-keys" });
    await terminal.until((t) => t.output().includes("relayed-keys"));
    terminal.close();
    await terminal.closed;
    await api("a", "DELETE", `/v1/sessions/${id}`);
  });
});

describe("events", () => {
  test("c's /v1/events carries a's events, numbered by the fleet, with Last-Event-ID replay", async () => {
    const c = hosts.c!;
    const open = (lastEventId?: string) =>
      fetch(`${c.url}/v1/events`, {
        headers: {
          authorization: `Bearer ${c.token()}`,
          ...(lastEventId ? { "last-event-id": lastEventId } : {}),
        },
      });
    const stream = sseReader((await open()).body!);
    const created = await api("a", "POST", "/v1/sessions", {
      name: "evented",
      workDir,
      agentCommand: SLEEPER,
      reuse: false,
    });
    const mine = (m: SseMessage) => (m.data?.session as Json | undefined)?.id === created.body.id;
    const seen: SseMessage[] = [];
    await until(async () => {
      seen.push(...(await stream.take(1, 5_000)));
      return seen.some((m) => mine(m) && m.event === "session.created");
    }, 10_000);
    const first = seen.find((m) => mine(m) && m.event === "session.created")!;
    expect(first.data?.host).toBe("a");
    await stream.cancel();
    // Replay from just before it: the same event again, with the same fleet id.
    const replay = sseReader((await open(String(Number(first.id) - 1))).body!);
    const again = (await replay.take(2, 5_000)).find((m) => m.id === first.id);
    expect(again?.event).toBe("session.created");
    await replay.cancel();
    await api("a", "DELETE", `/v1/sessions/${created.body.id}`);
  });
});

describe("host loss", () => {
  test("a host whose lease expires is offline within the lease; actions on its sessions answer 503 HOST_OFFLINE", async () => {
    // A host that stopped heartbeating (as after kill -9): its row, its session, and no renewal.
    const sql = new SQL(databaseUrl);
    const ghost = {
      ...(await api("a", "GET", "/v1/sessions")).body[0],
      id: crypto.randomUUID(),
      name: "ghost-1",
    };
    await sql`INSERT INTO fleet_hosts (name, url, secret, started_at, heartbeat_at, lease_until)
      VALUES ('ghost', 'http://127.0.0.1:9', 'agf_x', now(), now(), now() + make_interval(secs => ${LEASE_MS / 1000}))`;
    await sql`INSERT INTO fleet_sessions (id, host, tenant_id, data) VALUES (${ghost.id}, 'ghost', null, ${JSON.stringify(ghost)})`;
    await sql`SELECT pg_notify('ag_fleet', 'h:ghost')`;
    await sql`SELECT pg_notify('ag_fleet', ${`s:${ghost.id}`})`;
    const hostOnline = async (host: string) =>
      (await api(host, "GET", `/v1/sessions/${ghost.id}`)).body.hostOnline;
    await until(async () => (await hostOnline("b")) === true && (await hostOnline("c")) === true, 5_000);
    const started = Date.now();
    await until(async () => (await hostOnline("b")) === false, LEASE_MS + 2_000);
    expect(Date.now() - started).toBeLessThan(LEASE_MS + 1_000);
    const refused = await api("b", "POST", `/v1/sessions/${ghost.id}/interrupt`);
    expect([refused.status, refused.body.code]).toEqual([503, "HOST_OFFLINE"]);
    expect(refused.headers.get("retry-after")).toBe("5");
    // Listed as last known.
    expect((await list("c", "?host=ghost")).map((s) => s.id)).toEqual([ghost.id]);
    await sql`DELETE FROM fleet_sessions WHERE host = 'ghost'`;
    await sql`DELETE FROM fleet_hosts WHERE name = 'ghost'`;
    await sql.close();
  });
});

describe("the fleet database stopped and started", () => {
  test("hosts keep serving locally, say so, and catch up when it is back", async () => {
    await pg.stop();
    await until(async () => (await api("a", "GET", "/v1/health")).body.fleet.connected === false, 10_000);
    const local = await api("a", "POST", "/v1/sessions", {
      name: "during-outage",
      workDir,
      agentCommand: SLEEPER,
      reuse: false,
    });
    expect(local.status).toBe(201);
    expect((await list("a")).map((s) => s.id)).toContain(local.body.id);
    await pg.start();
    await until(async () => (await api("a", "GET", "/v1/health")).body.fleet.connected === true, 15_000);
    await until(seenOn("c", local.body.id), 15_000);
    const onC = (await api("c", "GET", `/v1/sessions/${local.body.id}`)).body;
    expect(onC).toMatchObject({ host: "a", hostOnline: true, name: "during-outage" });
    // Its events were published once each, outage or not.
    const sql = new SQL(databaseUrl);
    const [dups] = await sql`SELECT count(*)::int AS n FROM (
      SELECT host, event_id FROM fleet_events GROUP BY host, event_id HAVING count(*) > 1) d`;
    const [created] = await sql`SELECT count(*)::int AS n FROM fleet_events
      WHERE session_id = ${local.body.id} AND data::jsonb->>'event' = 'session.created'`;
    await sql.close();
    expect([dups.n, created.n]).toEqual([0, 1]);
    await api("a", "DELETE", `/v1/sessions/${local.body.id}`);
  }, 60_000);
});
