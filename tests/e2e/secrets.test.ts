import { Database } from "bun:sqlite";
import { afterAll, beforeAll, expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { type AgentWorld, startAgentWorld } from "../helpers/agent-world.ts";

// biome-ignore lint/suspicious/noExplicitAny: response bodies are inspected field by field
type Json = Record<string, any>;

/**
 * A whole run with auth on — keys, a real agent whose hooks call back with their secret, a
 * permission approved, an SSE stream, every read route — then a grep of everything ag said
 * (responses with their headers, the event stream, its log) for any secret. The only answers
 * allowed to hold one are the two that hand it out: a key's creation and an SSE token's.
 */
const MASTER = `master-${crypto.randomUUID()}`;
let world: AgentWorld;
const said: string[] = [];

beforeAll(async () => {
  world = await startAgentWorld({ SVC_AUTH_TOKEN: MASTER, SVC_LOG_LEVEL: "debug" });
}, 60_000);
afterAll(async () => {
  await world?.stop();
});

async function call(
  method: string,
  path: string,
  token: string,
  body?: unknown,
  record = true,
): Promise<Json> {
  const response = await fetch(`${world.ag.url}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${token}`,
      ...(body === undefined ? {} : { "content-type": "application/json" }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  // The request line without its query: a credential the test put there is not one ag said.
  if (record)
    said.push(
      `${method} ${path.split("?")[0]} ${response.status}\n${[...response.headers].join("\n")}\n${text}`,
    );
  const json = response.headers.get("content-type")?.includes("json");
  return { status: response.status, body: json && text ? JSON.parse(text) : text };
}

async function until(id: string, status: string, token: string): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    if ((await call("GET", `/v1/sessions/${id}`, token)).body.status === status) return;
    await Bun.sleep(100);
  }
  throw new Error(`session ${id} never became ${status}`);
}

test("no secret appears in any response, event or log line of a real run", async () => {
  const admin = (await call("POST", "/v1/auth/keys", MASTER, { name: "admin", scopes: ["*"] }, false)).body;
  const worker = (
    await call(
      "POST",
      "/v1/auth/keys",
      admin.key,
      { name: "worker", scopes: ["sessions:read", "sessions:write"] },
      false,
    )
  ).body;
  expect(worker.key).toMatch(/^agk_/);

  // The event stream, opened with a single-use token, read for the whole run.
  const sse = (await call("POST", "/v1/auth/sse-token", worker.key, undefined, false)).body;
  const closing = new AbortController();
  const stream = await fetch(`${world.ag.url}/v1/events?token=${sse.token}`, { signal: closing.signal });
  expect(stream.status).toBe(200);
  const events: string[] = [];
  const reading = (async () => {
    const decoder = new TextDecoder();
    for await (const chunk of stream.body!) events.push(decoder.decode(chunk));
  })().catch(() => {});

  const created = await call("POST", "/v1/sessions", worker.key, {
    workDir: world.workDir,
    prompt: "run cmd: touch approved.txt",
  });
  expect(created.status).toBe(201);
  const id = created.body.id as string;
  await until(id, "permission_prompt", worker.key);
  expect((await call("POST", `/v1/sessions/${id}/approve`, worker.key)).status).toBe(200);
  await until(id, "idle", worker.key);
  expect(existsSync(join(world.workDir, "approved.txt"))).toBe(true);

  for (const path of [
    "/v1/sessions",
    `/v1/sessions/${id}`,
    `/v1/sessions/${id}/read`,
    `/v1/sessions/${id}/transcript/cursor`,
    `/v1/sessions/${id}/pane`,
    `/v1/sessions/${id}/summary`,
    `/v1/sessions/${id}/health`,
    `/v1/sessions/${id}/metrics`,
    "/v1/sessions/stats",
    "/v1/auth/keys",
    "/v1/audit?limit=500",
    "/v1/diagnostics",
    "/v1/metrics",
    "/metrics",
    "/v1/swarm",
    "/v1/openapi.json",
    "/v1/channels/health",
    "/v1/health",
  ]) {
    expect([path, (await call("GET", path, admin.key)).status]).toEqual([path, 200]);
  }
  // Refusals speak of credentials without repeating them.
  expect((await call("GET", "/v1/sessions", `${admin.key}x`)).status).toBe(401);
  expect((await call("GET", `/v1/events?token=${MASTER}`, "")).status).toBe(401);
  expect((await call("DELETE", `/v1/sessions/${id}`, worker.key)).status).toBe(200);
  await Bun.sleep(200); // the kill's events
  closing.abort();
  await reading;

  const state = new Database(join(world.env.SVC_STATE_DIR!, "state.db"), { readonly: true });
  const hookSecret = (state.query("SELECT hook_secret FROM sessions WHERE id = ?").get(id) as Json)
    .hook_secret;
  state.close();
  expect(hookSecret.length).toBeGreaterThan(20);
  // The stream saw the run, and the agent's hooks got through with auth on (their secret, no token).
  expect(events.join("")).toContain("event: permission.requested");
  expect(events.join("")).toContain('"source":"hook"');

  const everything = [...said, events.join(""), world.ag.stderr()].join("\n");
  for (const [name, secret] of [
    ["master token", MASTER],
    ["admin key", admin.key],
    ["worker key", worker.key],
    ["the admin key's secret part", admin.key.slice(admin.prefix.length)],
    ["hook secret", hookSecret],
    ["SSE token", sse.token],
  ]) {
    const at = everything.indexOf(secret);
    expect([name, at === -1 ? "" : everything.slice(Math.max(0, at - 300), at + 50)]).toEqual([name, ""]);
  }
}, 120_000);
