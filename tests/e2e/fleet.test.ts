import { afterAll, beforeAll, expect, test } from "bun:test";
import { SQL } from "bun";
import { type AgentWorld, startAgentWorld } from "../helpers/agent-world.ts";
import { type AgProcess, agEnv, compiledBinary, freePort, startAg } from "../helpers/binary.ts";
import { startPostgres, type TestPostgres } from "../helpers/postgres.ts";
import { type SseMessage, type SseReader, sseReader } from "../helpers/sse.ts";
import { until } from "../helpers/until.ts";

// biome-ignore lint/suspicious/noExplicitAny: response bodies are inspected field by field
type Json = Record<string, any>;

/**
 * A fleet of three compiled ag binaries on one machine (each its own port, tmux socket, state
 * directory and HOME) on a real PostgreSQL server, with the REAL Claude Code on host A talking to
 * the mock model. One session does the whole story: created through B onto A, listed, read and
 * approved through C, its events on C's stream; A killed with SIGKILL and restarted; then the
 * database stopped and started. A 2 s lease keeps the waits short.
 */
const LEASE_MS = 2000;

let pg: TestPostgres;
let databaseUrl: string;
let a: AgentWorld;
let b: AgProcess;
let c: AgProcess;
let events: SseReader;
const seen: SseMessage[] = [];

function fleetEnv(name: string): Record<string, string> {
  return {
    SVC_FLEET_DATABASE_URL: databaseUrl,
    SVC_FLEET_HOST_NAME: name,
    SVC_FLEET_LEASE_MS: String(LEASE_MS),
    SVC_IDLE_TIMEOUT_MS: "0",
  };
}

/**
 * b and c run no agent here: a reserve above the machine's memory leaves them no headroom, so
 * `host: auto` has one answer (a) although every host of this machine has every folder.
 */
async function startHost(name: string): Promise<AgProcess> {
  const env = agEnv({
    ...fleetEnv(name),
    SVC_PORT: String(freePort()),
    SVC_HOST: "127.0.0.1",
    SVC_MEMORY_RESERVE_MB: String(1024 * 1024),
  });
  return startAg(await compiledBinary(), [], { env });
}

async function call(host: Pick<AgProcess, "url" | "token">, method: string, path: string, body?: unknown) {
  const response = await fetch(`${host.url}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${host.token()}`,
      ...(body === undefined ? {} : { "content-type": "application/json" }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  return { status: response.status, body: (text ? JSON.parse(text) : {}) as Json };
}

const session = (host: AgProcess | AgentWorld["ag"], id: string) =>
  call(host, "GET", `/v1/sessions/${id}`).then((r) => r.body);

beforeAll(async () => {
  pg = await startPostgres();
  databaseUrl = await pg.database("fleet_e2e");
  a = await startAgentWorld(fleetEnv("a"));
  [b, c] = await Promise.all([startHost("b"), startHost("c")]);
  await until(async () => (await call(c, "GET", "/v1/fleet")).body.hosts?.length === 3, 15_000);
  events = sseReader(
    (await fetch(`${c.url}/v1/events`, { headers: { authorization: `Bearer ${c.token()}` } })).body!,
  );
}, 120_000);

afterAll(async () => {
  await events?.cancel().catch(() => {});
  await Promise.all([b?.stop(), c?.stop()]);
  await a?.stop();
});

async function drain(): Promise<SseMessage[]> {
  seen.push(...(await events.available()));
  return seen;
}

let id: string;

test("created through b onto a (named), listed and read on c, its permission approved through c, every event on c's stream", async () => {
  const created = await call(b, "POST", "/v1/sessions", {
    workDir: a.workDir,
    prompt: "edit file",
    host: "a",
  });
  expect(created.status).toBe(201);
  id = created.body.id;
  expect((await session(a.ag, id)).host).toBe("a");
  await until(async () => (await session(c, id)).status === "permission_prompt", 60_000);
  const listed = (await call(c, "GET", "/v1/sessions?host=a")).body as Json[];
  expect(listed.find((s) => s.id === id)).toMatchObject({ host: "a", hostOnline: true });
  const waiting = await session(c, id);
  const approved = await call(c, "POST", `/v1/sessions/${id}/approve`, {
    permissionId: waiting.pendingPermission.id,
  });
  expect(approved.status).toBe(200);
  await until(async () => (await session(c, id)).status === "idle", 60_000);
  const read = await call(c, "GET", `/v1/sessions/${id}/read`);
  expect(read.status).toBe(200);
  // Every event a published of the session reached c's stream, once, tagged with its host.
  const sql = new SQL(databaseUrl);
  const published: string[] = (
    await sql`SELECT seq FROM fleet_events WHERE session_id = ${id} ORDER BY seq`
  ).map((r: { seq: string }) => String(r.seq));
  await sql.close();
  expect(published.length).toBeGreaterThan(3);
  await until(async () => {
    const ids = new Set((await drain()).filter((m) => (m.data?.session as Json)?.id === id).map((m) => m.id));
    return published.every((seq) => ids.has(seq));
  }, 10_000);
  const mine = seen.filter((m) => (m.data?.session as Json)?.id === id);
  expect(new Set(mine.map((m) => m.id)).size).toBe(mine.length);
  expect(mine.map((m) => m.event)).toContain("status.permission");
  expect(mine.every((m) => m.data?.host === "a")).toBe(true);
}, 150_000);

test("auto lands on the live host with the most headroom that has the workDir: a", async () => {
  const fleet = (await call(c, "GET", "/v1/fleet")).body.hosts as Json[];
  const headroom = Object.fromEntries(fleet.map((h) => [h.name, h.headroomMb]));
  expect(headroom.a).toBeGreaterThan(Math.max(headroom.b, headroom.c));
  const created = await call(c, "POST", "/v1/sessions", {
    workDir: a.workDir,
    agentCommand: "sh -c 'sleep 600'",
    host: "auto",
    reuse: false,
  });
  expect(created.status).toBe(201);
  expect((await call(a.ag, "GET", "/v1/sessions?host=a")).body.map((s: Json) => s.id)).toContain(
    created.body.id,
  );
  expect((await call(c, "DELETE", `/v1/sessions/${created.body.id}`)).status).toBe(200);
}, 60_000);

test("a killed with SIGKILL: offline on b and c within the lease, actions 503; restarted: back, nothing lost or doubled", async () => {
  const before = ((await call(c, "GET", "/v1/sessions?host=a")).body as Json[]).map((s) => s.id).sort();
  a.ag.proc.kill("SIGKILL");
  await a.ag.proc.exited;
  const killedAt = Date.now();
  await until(async () => (await session(b, id)).hostOnline === false, LEASE_MS + 3_000);
  await until(async () => (await session(c, id)).hostOnline === false, LEASE_MS + 3_000);
  expect(Date.now() - killedAt).toBeLessThan(LEASE_MS + 2_000);
  const refused = await call(c, "POST", `/v1/sessions/${id}/send`, { text: "hello?" });
  expect([refused.status, refused.body.code]).toEqual([503, "HOST_OFFLINE"]);
  expect((await session(c, id)).status).toBe("idle"); // as last known

  await a.restart();
  await until(async () => (await session(c, id)).hostOnline === true, 30_000);
  await until(async () => (await session(a.ag, id)).status === "idle", 30_000);
  const after = ((await call(c, "GET", "/v1/sessions?host=a")).body as Json[]).map((s) => s.id).sort();
  expect(after).toEqual(before);
  const sql = new SQL(databaseUrl);
  const [doubled] = await sql`SELECT count(*)::int AS n FROM (
    SELECT host, event_id FROM fleet_events GROUP BY host, event_id HAVING count(*) > 1) d`;
  await sql.close();
  expect(doubled.n).toBe(0);
  const sent = await call(c, "POST", `/v1/sessions/${id}/send`, { text: "still there?" });
  expect(sent.status).toBe(200);
  await until(async () => (await session(c, id)).status === "idle", 60_000);
}, 150_000);

test("the database stopped and started: hosts serve locally and say so, then catch up", async () => {
  await pg.stop();
  await until(async () => (await call(c, "GET", "/v1/health")).body.fleet?.connected === false, 15_000);
  expect((await call(a.ag, "GET", `/v1/sessions/${id}`)).status).toBe(200);
  const local = await call(a.ag, "POST", "/v1/sessions", {
    workDir: a.workDir,
    agentCommand: "sh -c 'sleep 600'",
    reuse: false,
  });
  expect(local.status).toBe(201);
  await pg.start();
  await until(async () => (await call(a.ag, "GET", "/v1/health")).body.fleet?.connected === true, 30_000);
  await until(async () => (await session(c, local.body.id)).host === "a", 15_000);
  expect((await call(c, "DELETE", `/v1/sessions/${local.body.id}`)).status).toBe(200);
}, 90_000);
