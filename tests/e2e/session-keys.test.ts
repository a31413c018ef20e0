import { afterAll, beforeAll, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { type AgProcess, agEnv, compiledBinary, startAg } from "../helpers/binary.ts";
import { callApi } from "../helpers/runtime.ts";
import { tempDir } from "../helpers/temp.ts";
import { until } from "../helpers/until.ts";

// biome-ignore lint/suspicious/noExplicitAny: response bodies are inspected field by field
type Json = Record<string, any>;

/**
 * A session key on its real path: the compiled ag offers a headless session's agent its own MCP
 * server (`ag mcp --config <file>`, the key in that 0600 file); the agent — the fake ACP agent
 * (tests/fakes/acp-agent.ts) as the Gemini entry's program — starts it over stdio with the MCP
 * SDK's client and calls list_sessions, as a real agent would. It lists its own session and the
 * one it created, not the session beside it.
 */
const MASTER = "session-keys-e2e-master";
const FAKE = join(import.meta.dir, "..", "fakes", "acp-agent.ts");
const agentCommand = [process.execPath, FAKE, "--state", tempDir("ag-keys-e2e-fake-")].join(" ");
const workDir = tempDir("ag-keys-e2e-work-");
let ag: AgProcess;

beforeAll(async () => {
  const binary = await compiledBinary();
  ag = await startAg(binary, ["--port", "0", "--host", "127.0.0.1"], {
    env: agEnv({ SVC_AUTH_TOKEN: MASTER }),
  });
}, 120_000);
afterAll(async () => {
  await ag?.stop();
});

/** A REST call as the holder of `token` (a session key, or ag's own). */
async function api(token: string, method: string, path: string, body?: unknown) {
  const { status, body: answer } = await callApi<Json>(
    { url: ag.url, token: () => token },
    method,
    path,
    body,
  );
  return { status, body: answer };
}

async function create(token: string, name: string, prompt?: string): Promise<string> {
  const created = await api(token, "POST", "/v1/sessions", {
    agent: "gemini",
    driver: "acp",
    agentCommand,
    workDir,
    offerMcp: true,
    name,
    reuse: false,
    ...(prompt ? { prompt } : {}),
  });
  expect(created.status).toBe(201);
  return created.body.id;
}

const idle = (id: string) =>
  until(async () => (await api(MASTER, "GET", `/v1/sessions/${id}`)).body.status === "idle", 30_000);

test("the MCP server ag offers a session's agent lists that session and those it created, nothing else", async () => {
  const creator = await create(MASTER, "creator");
  const beside = await create(MASTER, "beside");
  const config = join(ag.stateDir, "sessions", creator, "mcp-config.json");
  const { authToken } = JSON.parse(readFileSync(config, "utf8")) as { authToken: string };
  const child = await create(authToken, "child");
  expect((await api(MASTER, "GET", `/v1/sessions/${child}`)).body.parentId).toBe(creator);
  await idle(creator);

  expect(
    (await api(MASTER, "POST", `/v1/sessions/${creator}/send`, { text: "mcp list_sessions" })).status,
  ).toBe(200);
  await idle(creator);
  const { output } = (await api(MASTER, "GET", `/v1/sessions/${creator}/read`)).body;
  expect(output).toStartWith("mcp list_sessions: 2 sessions:");
  expect(output).toContain(creator);
  expect(output).toContain(child);
  expect(output).not.toContain(beside);

  // Its creator ended, the child ends too; the key is gone.
  expect((await api(MASTER, "DELETE", `/v1/sessions/${creator}`)).status).toBe(200);
  expect((await api(MASTER, "GET", `/v1/sessions/${child}`)).body.status).toBe("killed");
  expect((await api(authToken, "GET", "/v1/sessions")).status).toBe(401);
  expect((await api(MASTER, "GET", `/v1/sessions/${beside}`)).body.status).toBe("idle");
}, 120_000);
