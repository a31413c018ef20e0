import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { AgentInfo } from "../../src/agents/index.ts";
import { type BudgetService, createBudgetRepo, createBudgetService } from "../../src/budgets/index.ts";
import { createCheckpoints } from "../../src/checkpoints/index.ts";
import { createApiClient } from "../../src/cli/client.ts";
import { DEFAULT_BUDGETS } from "../../src/config/schema.ts";
import { StartConsensusInput } from "../../src/consensus/consensus.ts";
import { createEventBus } from "../../src/events/bus.ts";
import { createHandoffRepo, createHandoffService, type HandoffService } from "../../src/handoff/index.ts";
import { createMcpServer } from "../../src/mcp/server.ts";
import { inMcpTerms } from "../../src/mcp/terms.ts";
import { findTool, jsonSchema, TOOLS as TOOL_TABLE, type ToolApi } from "../../src/mcp/tools.ts";
import { MemoryInput } from "../../src/memory/entry.ts";
import { createPipelineService, type PipelineService } from "../../src/pipelines/index.ts";
import { CreatePipelineInput, Pipeline } from "../../src/pipelines/pipeline.ts";
import { MAX_BODY_BYTES } from "../../src/server/app.ts";
import { type HttpServer, listen } from "../../src/server/listen.ts";
import { budgetRoutes } from "../../src/server/routes/budgets.ts";
import { checkpointRoutes } from "../../src/server/routes/checkpoints.ts";
import { handoffRoutes } from "../../src/server/routes/handoff.ts";
import { pipelineRoutes } from "../../src/server/routes/pipelines.ts";
import { swarmRoutes } from "../../src/server/routes/swarm.ts";
import { toolRoutes } from "../../src/server/routes/tools.ts";
import { hintsFor, SessionHealth } from "../../src/sessions/index.ts";
import {
  CreatedSession,
  CreateSessionInput,
  Pane,
  SendInput,
  Session,
  SessionListQuery,
} from "../../src/sessions/session.ts";
import { systemClock } from "../../src/shared/clock.ts";
import { createLogger } from "../../src/shared/log.ts";
import { openDatabase } from "../../src/store/db.ts";
import { createSwarmService, type SwarmService } from "../../src/swarm/index.ts";
import { sampleSession, type TestApp, testApp } from "../helpers/app.ts";
import { answer, type ScriptedReviews, scriptedReviews } from "../helpers/consensus.ts";
import { errorOf, listedResources, misfits, SPEC_RESOURCES } from "../helpers/mcp.ts";
import { hook, pane, simulateAgents } from "../helpers/simulated-agent.ts";
import { tempDir } from "../helpers/temp.ts";
import { until } from "../helpers/until.ts";

// biome-ignore lint/suspicious/noExplicitAny: results are inspected field by field
type Json = Record<string, any>;

/**
 * `ag mcp`'s server in process, over the SDK's in-memory transport, talking over real HTTP to the
 * real app (fake tmux, simulated agents playing captured screens).
 */
let app: TestApp;
let http: HttpServer;
let client: Client;
let reviews: ScriptedReviews;
let pipelines: PipelineService;

/** A service the routes call before it exists: each call goes to the one built since. */
function deferred<T extends object>(get: () => T): T {
  return new Proxy({} as T, { get: (_target, key) => Reflect.get(get(), key) });
}

const SPEC_TOOLS = [
  "list_sessions",
  "get_status",
  "create_session",
  "kill_session",
  "escape_session",
  "interrupt_session",
  "send_message",
  "send_bash",
  "send_command",
  "get_transcript",
  "capture_pane",
  "get_session_metrics",
  "get_session_summary",
  "get_session_latency",
  "server_health",
  "approve_permission",
  "reject_permission",
  "batch_create_sessions",
  "list_pipelines",
  "create_pipeline",
  "list_agents",
  "get_swarm",
  "state_set",
  "state_get",
  "state_delete",
];

beforeAll(async () => {
  const bus = createEventBus();
  reviews = scriptedReviews(bus, (id) => app.sessions.get(id));
  // Pipelines and the swarm over the app's own sessions: built once the app is, reached through
  // the routes that are mounted with it (as the reviews reach app.sessions).
  const late: {
    pipelines?: PipelineService;
    swarm?: SwarmService;
    budgets?: BudgetService;
    handoffs?: HandoffService;
  } = {};
  // Checkpoints in a database and state folder of their own, taken at each turn's end.
  const checkpoints = createCheckpoints({
    db: openDatabase(":memory:"),
    stateDir: tempDir(),
    settings: { enabled: true, maxFileMb: 10, keepTurns: 100, keepDays: 30, keepWhenDeleted: false },
    tenantWorkdirs: {},
    clock: systemClock,
    logger: createLogger({ level: "silent", json: true }),
  });
  app = testApp({
    bus,
    plugins: [
      toolRoutes(),
      reviews.plugin,
      pipelineRoutes(deferred(() => late.pipelines!)),
      swarmRoutes(deferred(() => late.swarm!)),
      checkpointRoutes(
        deferred(() => app.sessions),
        checkpoints.sessions,
      ),
      budgetRoutes(
        deferred(() => late.budgets!),
        deferred(() => app.sessions),
      ),
      handoffRoutes(deferred(() => late.handoffs!)),
    ],
  });
  checkpoints.start(bus, (id) => app.repo.get(id));
  const quiet = createLogger({ level: "silent", json: true });
  late.budgets = createBudgetService({
    repo: createBudgetRepo(app.db),
    bus,
    clock: systemClock,
    logger: quiet,
    settings: DEFAULT_BUDGETS,
    sessions: app.sessions,
  });
  late.handoffs = createHandoffService({
    repo: createHandoffRepo(app.db),
    sessions: app.sessions,
    bus,
    clock: systemClock,
    logger: quiet,
    policy: { on: [], to: [] },
  });
  pipelines = createPipelineService({
    db: app.db,
    sessions: app.sessions,
    bus,
    clock: systemClock,
    logger: createLogger({ level: "silent", json: true }),
    stageTimeoutMs: 60_000,
  });
  late.pipelines = pipelines;
  late.swarm = createSwarmService({
    sessions: app.sessions,
    tmux: app.tmux,
    agents: app.agents,
    processes: async () => [],
  });
  simulateAgents(app);
  http = await listen(app, { host: "127.0.0.1", port: 0, maxBodyBytes: MAX_BODY_BYTES });
  // As `ag mcp` does on this machine: with ag's own token from its state directory.
  const api = createApiClient({ baseUrl: `http://127.0.0.1:${http.port}`, token: app.token });
  const server = createMcpServer({ api, version: "0.0.0-test" });
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  client = new Client({ name: "mcp-test", version: "1.0.0" });
  await Promise.all([server.connect(serverSide), client.connect(clientSide)]);
});
afterAll(async () => {
  pipelines?.close();
  await client?.close();
  await http?.stop(0);
});

async function call(name: string, args: Record<string, unknown> = {}): Promise<Json> {
  return (await client.callTool({ name, arguments: args })) as Json;
}

/** A session created through MCP, idle once its simulated agent has booted. */
async function idleSession(prompt?: string): Promise<{ id: string; paneId: string }> {
  const created = await call("create_session", { workDir: tempDir(), ...(prompt ? { prompt } : {}) });
  expect(created.isError).toBeUndefined();
  const id = created.structuredContent.id as string;
  if (prompt) await finishTurn(id);
  await until(() => app.repo.get(id)?.status === "idle");
  return { id, paneId: app.repo.get(id)!.paneId! };
}

/** The simulated agent ends its turn: idle screen and the Stop hook. */
async function finishTurn(id: string) {
  await until(() => app.repo.get(id)?.status === "working");
  app.tmux.setScreen(app.repo.get(id)!.paneId!, pane("01-idle-startup"));
  await hook(app, id, "Stop", {});
  await until(() => app.repo.get(id)?.status === "idle");
}

/** The text of a resource's only content. */
const textOf = (result: { contents: unknown[] }) => (result.contents[0] as { text: string }).text;

const pasted = (paneId: string) =>
  app.tmux
    .inputs(paneId)
    .filter((i) => i.kind === "paste")
    .map((i) => (i as { text: string }).text);

/**
 * Beyond SPEC's 24: answering the agent's question (CONTRACT §10), a session's health with
 * tool-named hints, consensus review (CONTRACT §7), checkpoints (docs/checkpoints.md) and
 * search (docs/search.md).
 */
const TOOLS = [
  ...SPEC_TOOLS,
  "answer_question",
  "get_session_health",
  "start_consensus",
  "get_consensus",
  "set_budget",
  "handoff_session",
  "list_checkpoints",
  "get_turn_diff",
  "rewind_session",
  "search_sessions",
  "continue_from_hit",
];

describe("what ag mcp offers", () => {
  test("SPEC's tools, answer_question, get_session_health and the consensus tools, the four resources, the three prompts with their arguments", async () => {
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual([...TOOLS].sort());
    for (const tool of tools) {
      expect(tool.description!.length).toBeGreaterThan(10);
      expect(tool.inputSchema.type).toBe("object");
    }
    expect(await listedResources(client)).toEqual(SPEC_RESOURCES);
    const { prompts } = await client.listPrompts();
    const args = Object.fromEntries(
      prompts.map((p) => [p.name, p.arguments!.map((a) => `${a.name}${a.required ? "" : "?"}`)]),
    );
    expect(args).toEqual({
      implement_issue: ["issueNumber", "workDir", "repoOwner?", "repoName?"],
      review_pr: ["prNumber", "workDir", "repoOwner?", "repoName?"],
      debug_session: ["sessionId"],
    });
  });

  test("tool inputs are the REST routes' own schemas, and GET /v1/tools lists the same tools", async () => {
    const { tools } = await client.listTools();
    const byName: Json = Object.fromEntries(tools.map((t) => [t.name, t.inputSchema]));
    expect(byName.list_sessions).toEqual(jsonSchema(SessionListQuery));
    const create = jsonSchema(CreateSessionInput) as Json;
    expect(byName.create_session).toEqual({
      type: "object",
      additionalProperties: false,
      required: ["workDir"],
      properties: {
        workDir: create.properties.workDir,
        name: create.properties.name,
        prompt: create.properties.prompt,
        reuse: create.properties.reuse,
        agent: create.properties.agent,
        driver: create.properties.driver,
        permissionMode: create.properties.permissionMode,
        model: create.properties.model,
        host: create.properties.host,
      },
    });
    // A batch runs where it is asked: its items are create_session's but for the fleet's host.
    const { host: _host, ...itemProperties } = byName.create_session.properties;
    expect(byName.batch_create_sessions.properties.sessions.items).toEqual({
      ...byName.create_session,
      properties: itemProperties,
    });
    expect(byName.send_message.properties.text).toEqual((jsonSchema(SendInput) as Json).properties.text);
    expect(byName.send_message.required).toEqual(["sessionId", "text"]);
    const memory = jsonSchema(MemoryInput) as Json;
    expect(byName.state_set.properties).toEqual({
      key: memory.properties.key,
      value: memory.properties.value,
      ttlSeconds: memory.properties.ttlSeconds,
    });
    expect(byName.state_get.properties.key).toEqual(memory.properties.key);
    const pipeline = jsonSchema(CreatePipelineInput) as Json;
    expect(byName.create_pipeline.properties.steps).toEqual(pipeline.properties.stages);
    expect([...byName.create_pipeline.required].sort()).toEqual(["name", "steps", "workDir"]);
    const consensus = jsonSchema(StartConsensusInput) as Json;
    expect(byName.start_consensus.properties).toEqual({
      sessionId: byName.get_status.properties.sessionId,
      criteria: consensus.properties.criteria,
      reviewers: consensus.properties.reviewers,
      agent: consensus.properties.agent,
      driver: consensus.properties.driver,
    });
    expect(byName.start_consensus.required).toEqual(["sessionId", "criteria"]);
    expect(byName.get_consensus.required).toEqual(["consensusId"]);
    for (const name of ["get_status", "kill_session", "approve_permission", "capture_pane"]) {
      expect(byName[name]!.required).toEqual(["sessionId"]);
    }

    const rest = await app.request("GET", "/v1/tools");
    expect(rest.status).toBe(200);
    expect(await rest.json()).toEqual(
      tools.map((t) => ({
        name: t.name,
        title: t.title,
        description: t.description,
        inputSchema: t.inputSchema,
        outputSchema: t.outputSchema,
        annotations: t.annotations,
      })),
    );
    const openApi = (await (await app.request("GET", "/v1/openapi.json")).json()) as Json;
    expect(openApi.paths["/v1/tools"].get.summary).toContain("MCP tools");
  });
});

describe("each tool is one call of the REST API", () => {
  test("the method, path and body of every tool", async () => {
    const calls: string[] = [];
    const api: ToolApi = {
      async get<T>(path: string) {
        calls.push(`GET ${path}`);
        return {} as T;
      },
      async send<T>(method: string, path: string, body?: unknown) {
        calls.push(`${method} ${path}${body === undefined ? "" : ` ${JSON.stringify(body)}`}`);
        return {} as T;
      },
    };
    const s = { sessionId: "a/b" }; // an id is one path segment, whatever it holds
    const at = "/v1/sessions/a%2Fb";
    const cases: Array<[string, Json, string]> = [
      ["list_sessions", { status: "idle", workDir: "app" }, "GET /v1/sessions?status=idle&workDir=app"],
      ["list_sessions", {}, "GET /v1/sessions"],
      ["get_status", s, `GET ${at}`],
      ["create_session", { workDir: "/w", prompt: "p" }, 'POST /v1/sessions {"workDir":"/w","prompt":"p"}'],
      ["create_session", { workDir: "/w", reuse: false }, 'POST /v1/sessions {"workDir":"/w","reuse":false}'],
      ["kill_session", s, `DELETE ${at}`],
      ["escape_session", s, `POST ${at}/escape`],
      ["interrupt_session", s, `POST ${at}/interrupt`],
      ["send_message", { ...s, text: "hi" }, `POST ${at}/send {"text":"hi"}`],
      ["send_bash", { ...s, command: "ls" }, `POST ${at}/send {"text":"!ls"}`],
      ["send_command", { ...s, command: "compact" }, `POST ${at}/send {"text":"/compact"}`],
      ["send_command", { ...s, command: "/clear" }, `POST ${at}/send {"text":"/clear"}`],
      ["get_transcript", s, `GET ${at}/transcript/cursor`],
      ["capture_pane", s, `GET ${at}/pane`],
      ["get_session_metrics", s, `GET ${at}/metrics`],
      ["get_session_summary", s, `GET ${at}/summary`],
      ["get_session_latency", s, `GET ${at}/latency`],
      ["server_health", {}, "GET /v1/health"],
      ["get_session_health", s, `GET ${at}/health | GET ${at}`],
      ["approve_permission", s, `POST ${at}/approve`],
      ["reject_permission", s, `POST ${at}/reject`],
      ["answer_question", { ...s, option: 2 }, `POST ${at}/answer {"option":2}`],
      ["answer_question", { ...s, text: "green" }, `POST ${at}/answer {"text":"green"}`],
      [
        "batch_create_sessions",
        { sessions: [{ workDir: "/w" }] },
        'POST /v1/sessions/batch {"sessions":[{"workDir":"/w"}]}',
      ],
      ["list_pipelines", {}, "GET /v1/pipelines"],
      [
        "create_pipeline",
        { name: "n", workDir: "/w", steps: [{ prompt: "p" }] },
        'POST /v1/pipelines {"name":"n","workDir":"/w","stages":[{"prompt":"p"}]}',
      ],
      [
        "start_consensus",
        { ...s, criteria: ["tests pass"], reviewers: 2 },
        `POST ${at}/consensus {"criteria":["tests pass"],"reviewers":2}`,
      ],
      ["start_consensus", { ...s, criteria: ["x"] }, `POST ${at}/consensus {"criteria":["x"]}`],
      ["get_consensus", { consensusId: "c/1" }, "GET /v1/consensus/c%2F1"],
      ["list_agents", {}, "GET /v1/agents"],
      ["get_swarm", {}, "GET /v1/swarm"],
      ["list_checkpoints", s, `GET ${at}/checkpoints`],
      ["get_turn_diff", { ...s, turn: 2 }, `GET ${at}/checkpoints/2/diff`],
      ["rewind_session", { ...s, turn: 1 }, `POST ${at}/rewind {"turn":1}`],
      ["rewind_session", { ...s, turn: 0, what: "both" }, `POST ${at}/rewind {"turn":0,"what":"both"}`],
      ["rewind_session", { ...s, undo: true }, `POST ${at}/rewind {"undo":true}`],
      [
        "state_set",
        { key: "team/x", value: "v", ttlSeconds: 5 },
        'POST /v1/memory {"key":"team/x","value":"v","ttlSeconds":5}',
      ],
      ["state_get", { key: "team/a b" }, "GET /v1/memory/team/a%20b"],
      ["state_delete", { key: "team/x" }, "DELETE /v1/memory/team/x"],
      ["set_budget", { ...s, usd: 2.5 }, `POST ${at}/budget {"usd":2.5}`],
      ["set_budget", { ...s, usd: null }, `POST ${at}/budget {"usd":null}`],
      [
        "handoff_session",
        { ...s, agent: "codex", note: "n" },
        `POST ${at}/handoff {"agent":"codex","note":"n"}`,
      ],
      [
        "search_sessions",
        { q: '"flaky test" fix*', role: "answer", workDir: "/w" },
        "GET /v1/search?q=%22flaky+test%22+fix*&role=answer&workDir=%2Fw",
      ],
      [
        "continue_from_hit",
        { hit: "s1#4", fork: true },
        'POST /v1/search/continue {"hit":"s1#4","fork":true}',
      ],
    ];
    expect([...new Set(cases.map(([name]) => name))].sort()).toEqual([...TOOLS].sort());
    for (const [name, args, expected] of cases) {
      calls.length = 0;
      await findTool(name)!.call(api, args as never);
      expect(`${name}: ${calls.join(" | ")}`).toBe(`${name}: ${expected}`);
    }
  });
});

describe("ag mcp as a process", () => {
  const MAIN = join(import.meta.dir, "..", "..", "src", "main.ts");

  /**
   * `bun src/main.ts mcp` fed JSON-RPC lines on stdin; stdin closes once the last request is
   * answered. Returns every stdout line parsed (a line that is not JSON fails the test) and stderr.
   */
  async function mcpProcess(env: Record<string, string>, calls: Json[] = []) {
    const home = tempDir("ag-mcp-home-");
    const proc = Bun.spawn([process.execPath, MAIN, "mcp"], {
      cwd: tempDir(),
      env: { PATH: process.env.PATH ?? "", HOME: home, SVC_STATE_DIR: join(home, ".svc"), ...env },
      stdin: "pipe",
      stdout: "pipe",
      stderr: "pipe",
    });
    const requests = [
      {
        method: "initialize",
        params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "1" } },
      },
      ...calls.map((params) => ({ method: "tools/call", params })),
    ].map((request, i) => ({ jsonrpc: "2.0", id: i + 1, ...request }));
    const lines: string[] = [];
    const reader = proc.stdout.getReader();
    const decoder = new TextDecoder();
    let buffer = "";
    const answered = (id: number) => lines.some((line) => JSON.parse(line).id === id);
    const readUntil = async (done: () => boolean) => {
      while (!done()) {
        const chunk = await reader.read();
        if (chunk.done) return;
        buffer += decoder.decode(chunk.value, { stream: true });
        const complete = buffer.split("\n");
        buffer = complete.pop()!;
        lines.push(...complete.filter((line) => line !== ""));
      }
    };
    proc.stdin.write(`${JSON.stringify(requests[0])}\n`);
    await readUntil(() => answered(1));
    proc.stdin.write(`${JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" })}\n`);
    for (const request of requests.slice(1)) proc.stdin.write(`${JSON.stringify(request)}\n`);
    proc.stdin.flush();
    await readUntil(() => answered(requests.length));
    proc.stdin.end();
    await readUntil(() => false);
    const [stderr, exitCode] = await Promise.all([new Response(proc.stderr).text(), proc.exited]);
    const messages = lines.map((line) => JSON.parse(line) as Json);
    for (const message of messages) expect(message.jsonrpc).toBe("2.0");
    return { results: messages.slice(1).map((m) => m.result as Json), stderr, exitCode };
  }

  test("SVC_PORT or SVC_BASE_URL pick the server, SVC_AUTH_TOKEN is its token; stdout is JSON-RPC only", async () => {
    const secured = testApp({ authToken: "s3cret", supervise: false });
    const server = await listen(secured, { host: "127.0.0.1", port: 0, maxBodyBytes: MAX_BODY_BYTES });
    try {
      const url = `http://127.0.0.1:${server.port}`;
      const list = { name: "list_sessions", arguments: {} };
      // Debug logging on: every log line must still go to stderr.
      const byPort = await mcpProcess(
        { SVC_PORT: String(server.port), SVC_AUTH_TOKEN: "s3cret", SVC_LOG_LEVEL: "debug" },
        [list],
      );
      expect(byPort.exitCode).toBe(0);
      expect(byPort.stderr).toContain(`serving ${url} over stdio`);
      expect(byPort.results[0]!.isError).toBeUndefined();
      expect(JSON.parse(byPort.results[0]!.content.at(-1).text)).toEqual([]);

      const byUrl = await mcpProcess({ SVC_BASE_URL: url, SVC_PORT: "1", SVC_LOG_LEVEL: "debug" }, [list]);
      expect(byUrl.stderr).toContain(`serving ${url} over stdio`);
      expect(errorOf(byUrl.results[0]!).code).toBe("UNAUTHORIZED");

      const byDefault = await mcpProcess({ SVC_LOG_LEVEL: "debug" });
      expect(byDefault.stderr).toContain("serving http://127.0.0.1:9100 over stdio");
    } finally {
      await server.stop(0);
    }
  }, 30_000);
});

describe("tools drive sessions through the REST API", () => {
  test("create_session, get_status, list_sessions, send_message, capture_pane, kill_session", async () => {
    const workDir = tempDir();
    const created = await call("create_session", { workDir, name: "via-mcp", prompt: "hello there" });
    expect(created.isError).toBeUndefined();
    expect(created.structuredContent).toMatchObject({
      name: "via-mcp",
      workDir,
      reused: false,
      promptDelivery: { delivered: true, attempts: 1 },
    });
    const id = created.structuredContent.id as string;
    const paneId = app.repo.get(id)!.paneId!;
    expect(pasted(paneId)).toEqual(["hello there"]);
    await finishTurn(id);

    const status = await call("get_status", { sessionId: id });
    expect(status.structuredContent).toMatchObject({ id, status: "idle" });
    const listed = await call("list_sessions", { workDir });
    expect(JSON.parse(listed.content.at(-1).text).map((s: Json) => s.id)).toEqual([id]);
    const none = await call("list_sessions", { status: "killed", workDir });
    expect(JSON.parse(none.content.at(-1).text)).toEqual([]);

    const sent = await call("send_message", { sessionId: id, text: "and now?" });
    expect(sent.structuredContent).toEqual({ delivered: true, attempts: 1 });
    expect(pasted(paneId).at(-1)).toBe("and now?");
    await finishTurn(id);

    const screen = await call("capture_pane", { sessionId: id });
    expect(screen.content[0].text).toBe(app.tmux.screen(paneId));
    expect(screen.structuredContent).toEqual({ id, content: app.tmux.screen(paneId) });

    const killed = await call("kill_session", { sessionId: id });
    expect(killed.structuredContent).toMatchObject({ id, status: "killed" });
  });

  test("create_session reuses an idle session of the workDir only as asked: reuse false, or another name, is a new one", async () => {
    const { id } = await idleSession();
    const { workDir, name } = app.repo.get(id)!;
    const fresh = await call("create_session", { workDir, reuse: false });
    expect(fresh.structuredContent).toMatchObject({ reused: false, workDir });
    expect(fresh.structuredContent.id).not.toBe(id);
    const other = await call("create_session", { workDir, name: "someone-else" });
    expect(other.structuredContent).toMatchObject({ reused: false, name: "someone-else" });
    const same = await call("create_session", { workDir, name });
    expect(same.structuredContent).toMatchObject({ id, reused: true, name });
  });

  test("send_bash prefixes !, send_command prefixes / unless it is there", async () => {
    const { id, paneId } = await idleSession();
    await call("send_bash", { sessionId: id, command: "ls -la" });
    expect(pasted(paneId).at(-1)).toBe("!ls -la");
    await finishTurn(id);
    await call("send_command", { sessionId: id, command: "compact" });
    expect(pasted(paneId).at(-1)).toBe("/compact");
    await finishTurn(id);
    await call("send_command", { sessionId: id, command: "/clear" });
    expect(pasted(paneId).at(-1)).toBe("/clear");
  });

  test("approve_permission and reject_permission answer the agent's dialog", async () => {
    const { id, paneId } = await idleSession();
    const none = await call("approve_permission", { sessionId: id });
    expect(none.isError).toBe(true);
    expect(errorOf(none).code).toBe("NO_PENDING_PERMISSION");
    await hook(app, id, "PermissionRequest", { tool_name: "Bash", tool_input: { command: "ls" } });
    const approved = await call("approve_permission", { sessionId: id });
    expect(approved.isError).toBeUndefined();
    expect(app.tmux.typed(paneId).at(-1)).toBe("Enter");
    await hook(app, id, "PermissionRequest", { tool_name: "Bash", tool_input: { command: "rm x" } });
    await call("reject_permission", { sessionId: id });
    expect(app.tmux.typed(paneId).at(-1)).toBe("Escape");
  });

  test("an unknown session is an isError result that keeps the code", async () => {
    const missing = crypto.randomUUID();
    for (const name of ["get_status", "kill_session", "get_transcript", "capture_pane", "send_bash"]) {
      const result = await call(name, {
        sessionId: missing,
        ...(name === "send_bash" ? { command: "ls" } : {}),
      });
      expect(result.isError).toBe(true);
      // The route's own message ("no session …" or "no running session …"), after the code.
      expect(result.content[0].text).toMatch(
        new RegExp(`^SESSION_NOT_FOUND: no (running )?session ${missing}$`),
      );
      expect(errorOf(result)).toEqual({
        error: result.content[0].text.slice("SESSION_NOT_FOUND: ".length),
        code: "SESSION_NOT_FOUND",
        statusCode: 404,
      });
    }
  });

  test("arguments are checked against the schema before any request; an unknown tool is a protocol error", async () => {
    const result = await call("send_message", { sessionId: "x" });
    expect(result.isError).toBe(true);
    expect(errorOf(result).code).toBe("VALIDATION_ERROR");
    expect(result.content[0].text).toContain("text");
    const badStatus = await call("list_sessions", { status: "sleeping" });
    expect(errorOf(badStatus).code).toBe("VALIDATION_ERROR");
    const limit = await call("batch_create_sessions", { sessions: [] });
    expect(errorOf(limit).code).toBe("VALIDATION_ERROR");
    await expect(call("no_such_tool")).rejects.toThrow(/no tool no_such_tool/);
  });

  test("a REST refusal passes through with its code: INVALID_WORKDIR", async () => {
    const result = await call("create_session", { workDir: "relative/path" });
    expect(result.isError).toBe(true);
    expect(errorOf(result)).toMatchObject({ code: "INVALID_WORKDIR", statusCode: 400 });
  });

  test("batch_create_sessions: partial success", async () => {
    const result = await call("batch_create_sessions", {
      sessions: [{ workDir: tempDir(), name: "b1" }, { workDir: "/no/such/dir" }],
    });
    expect(result.isError).toBeUndefined();
    expect(result.structuredContent.created.map((s: Json) => s.name)).toEqual(["b1"]);
    expect(result.structuredContent.failed).toMatchObject([{ index: 1, code: "INVALID_WORKDIR" }]);
  });

  test("state_set, state_get, state_delete: keys with a namespace", async () => {
    const set = await call("state_set", { key: "team/notes", value: "ship it", ttlSeconds: 60 });
    expect(set.structuredContent).toMatchObject({ key: "team/notes", value: "ship it" });
    expect(set.structuredContent.expiresAt).not.toBeNull();
    expect((await call("state_get", { key: "team/notes" })).structuredContent.value).toBe("ship it");
    expect((await call("state_delete", { key: "team/notes" })).structuredContent).toEqual({
      key: "team/notes",
      deleted: true,
    });
    const gone = await call("state_get", { key: "team/notes" });
    expect(errorOf(gone).code).toBe("MEMORY_NOT_FOUND");
  });

  test("server_health", async () => {
    const health = await call("server_health");
    expect(health.structuredContent).toMatchObject({ status: "ok", version: "0.0.0-test" });
  });
});

describe("consensus review through MCP", () => {
  test("start_consensus answers at once (running); get_consensus has the verdict, each summarized", async () => {
    const target = sampleSession({ workDir: tempDir() });
    app.repo.insert(target);
    reviews.script([[answer("APPROVE", ["PASS", "PASS"])], [answer("REJECT", ["PASS", "FAIL"], "no docs")]], {
      hold: true,
    });
    const started = await call("start_consensus", {
      sessionId: target.id,
      criteria: ["tests pass", "docs updated"],
      reviewers: 2,
    });
    expect(started.isError).toBeUndefined();
    const id = started.structuredContent.id as string;
    expect(started.structuredContent).toMatchObject({
      sessionId: target.id,
      status: "running",
      verdict: null,
    });
    expect(started.content[0].text).toStartWith(
      `Consensus review ${id} of session ${target.id} is running: 0 of 2 reviewers finished, 2 criteria.\nReviewers:\n- Reviewer 1: `,
    );
    expect(started.content[0].text).toEndWith(
      `Next: call get_consensus (consensusId "${id}") again later: a review lasts as long as its slowest reviewer.`,
    );

    await until(() => reviews.sent.length === 2);
    reviews.release();
    await reviews.service.settled(id);
    const done = await call("get_consensus", { consensusId: id });
    expect(done.structuredContent).toMatchObject({
      id,
      status: "completed",
      verdict: "split",
      agreement: 0.5,
    });
    expect(done.content[0].text).toBe(
      [
        `Consensus review ${id} of session ${target.id}: split: 1 approve, 1 reject (agreement 50%).`,
        "Criteria:",
        '- 1. "tests pass": pass (2 pass, 0 fail)',
        '- 2. "docs updated": split (1 pass, 1 fail)',
        "Reviewers:",
        "- Reviewer 1: approve",
        "- Reviewer 2: reject — FAIL 2: no docs 2",
        "Cost: $0.02 (estimate).",
        `Next: read the reviewers' notes and decide, or call start_consensus (sessionId "${target.id}") again with an odd number of reviewers.`,
      ].join("\n"),
    );
    expect(JSON.parse(done.content.at(-1).text).id).toBe(id);
  });

  test("an unknown review or session, and criteria or reviewers out of bounds, are isError results", async () => {
    const missing = crypto.randomUUID();
    const unknown = await call("get_consensus", { consensusId: missing });
    expect(errorOf(unknown).code).toBe("CONSENSUS_NOT_FOUND");
    const noSession = await call("start_consensus", { sessionId: missing, criteria: ["x"] });
    expect(errorOf(noSession).code).toBe("SESSION_NOT_FOUND");
    for (const bad of [{ criteria: [] }, { criteria: ["x"], reviewers: 8 }, { criteria: [""] }]) {
      const result = await call("start_consensus", { sessionId: missing, ...bad });
      expect(errorOf(result).code).toBe("VALIDATION_ERROR");
    }
  });
});

/**
 * A schema's JSON without `additionalProperties`: Elysia sets it (false) in place on a route's
 * response schema when it compiles the route, so the same object reads with or without it.
 */
const loose = (schema: unknown): Json =>
  JSON.parse(JSON.stringify(schema, (key, value) => (key === "additionalProperties" ? undefined : value)));

const ASK_COLOR = {
  tool_name: "AskUserQuestion",
  tool_input: {
    questions: [
      {
        question: "Which color should the button be?",
        options: [{ label: "Red" }, { label: "Blue" }],
        multiSelect: false,
      },
    ],
  },
};

describe("output schemas, annotations and structured results", () => {
  test("every tool has an object outputSchema, the route's own response schema; a title; the four annotations", async () => {
    const { tools } = await client.listTools();
    expect(tools).toHaveLength(TOOL_TABLE.length);
    for (const listed of tools) {
      const tool = findTool(listed.name)!;
      expect(listed.outputSchema?.type).toBe("object");
      expect(loose(listed.outputSchema)).toEqual(loose(tool.output));
      expect(listed.title).toBe(tool.title);
      expect(listed.annotations).toEqual({
        title: tool.title,
        readOnlyHint: expect.any(Boolean),
        destructiveHint: expect.any(Boolean),
        idempotentHint: expect.any(Boolean),
        openWorldHint: false,
      });
      // A tool that reads changes nothing: it destroys nothing and may be called again.
      if (listed.annotations!.readOnlyHint) {
        expect(listed.annotations!.destructiveHint).toBe(false);
        expect(listed.annotations!.idempotentHint).toBe(true);
      }
    }
    const schemas: Json = Object.fromEntries(tools.map((t) => [t.name, loose(t.outputSchema)]));
    expect(schemas.get_status).toEqual(loose(Session));
    expect(schemas.create_session).toEqual(loose(CreatedSession));
    expect(schemas.capture_pane).toEqual(loose(Pane));
    expect(schemas.get_session_health).toEqual(loose(SessionHealth));
    // A list answered by REST is, in MCP, an object holding it under its name.
    expect(schemas.list_sessions.properties.sessions.items).toEqual(loose(Session));
    expect(schemas.list_pipelines.properties.pipelines.items).toEqual(loose(Pipeline));
    expect(schemas.list_agents.properties.agents.items).toEqual(loose(AgentInfo));

    const hints: Json = Object.fromEntries(tools.map((t) => [t.name, t.annotations]));
    expect(hints.kill_session).toMatchObject({ readOnlyHint: false, destructiveHint: true });
    expect(hints.state_delete).toMatchObject({ destructiveHint: true, idempotentHint: true });
    for (const name of ["send_message", "send_bash", "create_session", "answer_question"])
      expect(hints[name]).toMatchObject({ readOnlyHint: false, idempotentHint: false });
    for (const name of TOOL_TABLE.map((t) => t.name).filter((n) => /^(get|list)_/.test(n)))
      expect(hints[name]).toMatchObject({ readOnlyHint: true, idempotentHint: true });
  });

  test("each successful call's structuredContent validates against its outputSchema: the SDK client's check and TypeBox's", async () => {
    // The SDK client checks structuredContent in callTool with the validators listTools cached.
    await client.listTools();
    const validators = client as unknown as { getToolOutputValidator(name: string): unknown };
    for (const tool of TOOL_TABLE) expect(validators.getToolOutputValidator(tool.name)).toBeFunction();

    const called = new Set<string>();
    const checked = async (name: string, args: Json = {}) => {
      const result = await call(name, args);
      expect(result.isError, `${name}: ${result.content?.[0]?.text}`).toBeUndefined();
      const tool = findTool(name)!;
      expect({ name, misfits: misfits(tool.output, result.structuredContent) }).toEqual({
        name,
        misfits: [],
      });
      // The text still ends with the REST body itself (a list stays a list there; a screen is text).
      const text = result.content.at(-1).text as string;
      const body = tool.render ? result.structuredContent : JSON.parse(text);
      if (tool.render) expect(text).toBe(tool.render(body));
      expect(tool.structure ? tool.structure(body) : body).toEqual(result.structuredContent);
      called.add(name);
      return result.structuredContent as Json;
    };

    const workDir = tempDir();
    const created = await checked("create_session", { workDir, name: "schemas", prompt: "hello" });
    const sessionId = created.id as string;
    const s = { sessionId };
    await finishTurn(sessionId);
    for (const name of ["get_status", "get_transcript", "capture_pane", "get_session_metrics"])
      await checked(name, s);
    for (const name of ["get_session_summary", "get_session_latency", "get_session_health"])
      await checked(name, s);
    expect((await checked("list_sessions", { workDir })).sessions).toHaveLength(1);
    await until(
      async () => (await call("list_checkpoints", s)).structuredContent?.checkpoints?.[0]?.endedAt,
      10_000,
    );
    expect((await checked("list_checkpoints", s)).checkpoints).toHaveLength(1);
    await checked("get_turn_diff", { ...s, turn: 1 });
    expect(await checked("rewind_session", { ...s, turn: 1 })).toMatchObject({ turn: 1, what: "code" });
    for (const name of ["server_health", "list_pipelines", "list_agents", "get_swarm"]) await checked(name);

    await checked("send_message", { ...s, text: "next" });
    await checked("interrupt_session", s);
    await finishTurn(sessionId);
    await checked("send_bash", { ...s, command: "ls" });
    await finishTurn(sessionId);
    await checked("send_command", { ...s, command: "compact" });
    await finishTurn(sessionId);
    await checked("escape_session", s);
    await hook(app, sessionId, "PermissionRequest", { tool_name: "Bash", tool_input: { command: "ls" } });
    await checked("approve_permission", s);
    await hook(app, sessionId, "PermissionRequest", { tool_name: "Bash", tool_input: { command: "rm x" } });
    await checked("reject_permission", s);
    await hook(app, sessionId, "PermissionRequest", ASK_COLOR);
    await checked("answer_question", { ...s, option: 2 });

    await checked("batch_create_sessions", { sessions: [{ workDir: tempDir() }] });
    await checked("create_pipeline", { name: "p", workDir: tempDir(), steps: [{ prompt: "go" }] });
    reviews.script([[answer("APPROVE", ["PASS"])]]);
    const review = await checked("start_consensus", { ...s, criteria: ["it works"], reviewers: 1 });
    await reviews.service.settled(review.id as string);
    await checked("get_consensus", { consensusId: review.id });
    await checked("state_set", { key: "team/schemas", value: "v" });
    await checked("state_get", { key: "team/schemas" });
    await checked("state_delete", { key: "team/schemas" });
    await checked("set_budget", { ...s, usd: 2.5 });
    // A handoff starts another agent CLI, which this app's simulated agents do not play: its answer's
    // schema is checked on the real CLIs (tests/e2e/budgets.test.ts). Here, its refusal in MCP terms.
    const handoff = await call("handoff_session", { ...s, agent: "claude" });
    expect(handoff.isError).toBe(true);
    expect(handoff.content[0].text).toContain("VALIDATION_ERROR");
    // Its conversation (a captured Claude Code transcript), indexed: found, and forked from a hit.
    const transcript = join(tempDir(), `${sessionId}.jsonl`);
    await Bun.write(
      transcript,
      Bun.file(join(import.meta.dir, "..", "fixtures", "transcripts", "sample.jsonl")),
    );
    app.repo.update(sessionId, { transcriptPath: transcript });
    await app.search.index(sessionId);
    const found = await checked("search_sessions", { q: "hello", role: "prompt" });
    expect(found.hits[0]).toMatchObject({ sessionId, role: "prompt" });
    const forked = await checked("continue_from_hit", { hit: found.hits[0].hit, fork: true });
    expect(forked).toMatchObject({ continuedFrom: found.hits[0].hit, workDir });
    await checked("kill_session", s);
    expect([...called, "handoff_session"].sort()).toEqual(TOOL_TABLE.map((t) => t.name).sort());
  });

  test("a message that names a REST route names the MCP tool instead: approve_permission on a question", async () => {
    const { id } = await idleSession();
    await hook(app, id, "PermissionRequest", ASK_COLOR);
    const refused = await call("approve_permission", { sessionId: id });
    expect(errorOf(refused).code).toBe("CONFLICT");
    expect(refused.content[0].text).toBe(
      `CONFLICT: session ${id} asks a question: answer it with answer_question (sessionId "${id}")`,
    );
    expect(JSON.stringify(refused.content)).not.toContain("/v1/");
    // REST keeps its own words.
    const rest = await app.request("POST", `/v1/sessions/${id}/approve`);
    expect(((await rest.json()) as Json).error).toContain(`POST /v1/sessions/${id}/answer`);

    // Every route a tool makes is told as that tool; REST's health hints read as MCP's.
    expect(inMcpTerms(`call POST /v1/sessions/${id}/send now`)).toBe(
      `call send_message (sessionId "${id}") now`,
    );
    expect(inMcpTerms(`DELETE /v1/sessions/${id}, or GET /v1/sessions/${id}/read`)).toBe(
      `kill_session (sessionId "${id}"), or GET /v1/sessions/${id}/read`,
    );
    expect(inMcpTerms("GET /v1/consensus/c1 says")).toBe('get_consensus (consensusId "c1") says');
    expect(inMcpTerms("invalid body.workDir: required")).toBe("invalid arguments.workDir: required");
    for (const hint of hintsFor({ id, status: "asking", pendingPermission: null }, 0, "rest"))
      expect(inMcpTerms(hint)).not.toContain("/v1/");
  });
});

describe("resources and prompts", () => {
  test("svc://sessions, svc://health, a session's pane and transcript", async () => {
    const { id, paneId } = await idleSession();
    const sessions = await client.readResource({ uri: "svc://sessions" });
    expect(sessions.contents[0]!.mimeType).toBe("application/json");
    expect(JSON.parse(textOf(sessions)).some((s: Json) => s.id === id)).toBe(true);
    const health = await client.readResource({ uri: "svc://health" });
    expect(JSON.parse(textOf(health)).status).toBe("ok");
    const screen = await client.readResource({ uri: `svc://sessions/${id}/pane` });
    expect(screen.contents[0]).toMatchObject({ mimeType: "text/plain", text: app.tmux.screen(paneId) });
    const transcript = await client.readResource({ uri: `svc://sessions/${id}/transcript` });
    expect(JSON.parse(textOf(transcript))).toHaveProperty("messages");
  });

  test("an unknown session or resource is a JSON-RPC error naming the code", async () => {
    const missing = crypto.randomUUID();
    await expect(client.readResource({ uri: `svc://sessions/${missing}/pane` })).rejects.toThrow(
      `SESSION_NOT_FOUND: no session ${missing}`,
    );
    await expect(client.readResource({ uri: "svc://nothing" })).rejects.toThrow("no resource svc://nothing");
  });

  test("implement_issue and review_pr carry their arguments into the instructions", async () => {
    const issue = await client.getPrompt({
      name: "implement_issue",
      arguments: { issueNumber: "42", workDir: "/src/app", repoOwner: "acme", repoName: "app" },
    });
    const text = (issue.messages[0]!.content as { text: string }).text;
    expect(text).toContain("issue #42 of acme/app");
    expect(text).toContain("gh issue view 42 --repo acme/app");
    expect(text).toContain('workDir "/src/app"');
    const review = await client.getPrompt({
      name: "review_pr",
      arguments: { prNumber: "7", workDir: "/src/app" },
    });
    const reviewText = (review.messages[0]!.content as { text: string }).text;
    expect(reviewText).toContain("gh pr diff 7`");
    expect(reviewText).not.toContain("--repo");
    await expect(client.getPrompt({ name: "review_pr", arguments: { prNumber: "7" } })).rejects.toThrow(
      /workDir/,
    );
  });

  test("debug_session embeds the status, the transcript and the screen", async () => {
    const { id, paneId } = await idleSession();
    app.tmux.setScreen(paneId, pane("06-permission-bash"));
    await until(() => app.repo.get(id)?.status === "permission_prompt");
    const prompt = await client.getPrompt({ name: "debug_session", arguments: { sessionId: id } });
    const text = (prompt.messages[0]!.content as { text: string }).text;
    expect(text).toContain(`Diagnose ag session ${id}`);
    expect(text).toContain('"status": "permission_prompt"');
    expect(text).toContain("## Transcript");
    expect(text).toContain("touch created-by-bash.txt");
    expect(text).toContain(app.tmux.screen(paneId).trim().split("\n")[0]!);
    const missing = crypto.randomUUID();
    await expect(
      client.getPrompt({ name: "debug_session", arguments: { sessionId: missing } }),
    ).rejects.toThrow(`SESSION_NOT_FOUND: no session ${missing}`);
  });
});
