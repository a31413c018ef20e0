import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { findTool } from "../../src/mcp/tools.ts";
import { type AgentWorld, startAgentWorld } from "../helpers/agent-world.ts";
import { compiledBinary } from "../helpers/binary.ts";
import { errorOf, listedResources, misfits, SPEC_RESOURCES } from "../helpers/mcp.ts";
import { tempDir } from "../helpers/temp.ts";

// biome-ignore lint/suspicious/noExplicitAny: results are inspected field by field
type Json = Record<string, any>;

/**
 * `ag mcp` of the compiled binary, spawned by the SDK's stdio client, driving a compiled `ag`
 * whose sessions run the REAL agent CLI against the mock model. One agent at a time: the tests
 * run in order against one world.
 */
let world: AgentWorld;
let binary: string;
let client: Client;
let stderr = "";
let id: string;

beforeAll(async () => {
  world = await startAgentWorld();
  binary = await compiledBinary();
  // SVC_PORT and SVC_STATE_DIR of the world: what a user's MCP config would set.
  const transport = new StdioClientTransport({
    command: binary,
    args: ["mcp"],
    env: world.env,
    cwd: tempDir(),
    stderr: "pipe",
  });
  transport.stderr?.on("data", (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  client = new Client({ name: "ag-e2e", version: "1.0.0" });
  await client.connect(transport);
}, 90_000);
afterAll(async () => {
  await client?.close();
  await world?.stop();
});

/**
 * A tool call. The SDK client checks a result's structuredContent against the tool's outputSchema
 * (listTools, the first test, cached them); TypeBox checks it again against the schema itself.
 */
async function call(name: string, args: Record<string, unknown> = {}): Promise<Json> {
  const result = (await client.callTool({ name, arguments: args })) as Json;
  if (!result.isError) expect(misfits(findTool(name)!.output, result.structuredContent)).toEqual([]);
  return result;
}

/**
 * The transcript entries get_transcript returns, as `kind: text`, once one matches `wanted`: the
 * agent appends its transcript on its own schedule, which may trail the hook that made it idle.
 */
async function transcriptUntil(sessionId: string, wanted: (line: string) => boolean): Promise<string[]> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const result = await call("get_transcript", { sessionId });
    expect(result.isError).toBeUndefined();
    const lines = (result.structuredContent.messages as Json[]).map((m) => `${m.kind}: ${m.text}`);
    if (lines.some(wanted) || Date.now() > deadline) return lines;
    await Bun.sleep(100);
  }
}

describe("ag mcp against a real agent", () => {
  test("the compiled binary lists SPEC's 24 tools, answer_question, get_session_health and the 2 consensus tools, the 3 checkpoint tools, the resources and their templates, the 3 prompts", async () => {
    const { tools } = await client.listTools();
    expect(tools).toHaveLength(36);
    for (const tool of tools) {
      expect(tool.outputSchema?.type).toBe("object");
      expect(tool.annotations).toMatchObject({ title: tool.title, openWorldHint: false });
    }
    expect(tools.map((t) => t.name)).toContain("start_consensus");
    expect(tools.map((t) => t.name)).toContain("get_consensus");
    expect(tools.map((t) => t.name)).toContain("get_session_health");
    expect(tools.map((t) => t.name)).toContain("send_bash");
    expect(tools.map((t) => t.name)).toContain("answer_question");
    expect(await listedResources(client)).toEqual(SPEC_RESOURCES);
    const { prompts } = await client.listPrompts();
    expect(prompts.map((p) => p.name).sort()).toEqual(["debug_session", "implement_issue", "review_pr"]);
    const health = await client.readResource({ uri: "svc://health" });
    expect(JSON.parse((health.contents[0] as { text: string }).text)).toMatchObject({ status: "ok" });
  });

  test("create_session delivers the prompt; get_transcript shows the reply", async () => {
    const created = await call("create_session", { workDir: world.workDir, prompt: "say hello" });
    expect(created.isError).toBeUndefined();
    expect(created.structuredContent).toMatchObject({
      workDir: world.workDir,
      reused: false,
      promptDelivery: { delivered: true, attempts: 1 },
    });
    id = created.structuredContent.id;
    await world.waitFor(id, "idle");
    const texts = await transcriptUntil(id, (t) => t.startsWith("text: Hello"));
    expect(texts).toContain("prompt: say hello");
    expect(texts.some((t) => t.startsWith("text: Hello from the mock model!"))).toBe(true);
    const listed = await call("list_sessions", { status: "idle" });
    expect(JSON.parse(listed.content.at(-1).text).map((s: Json) => s.id)).toEqual([id]);
  }, 60_000);

  test("approve_permission lets the agent's Bash command run", async () => {
    const sent = await call("send_message", { sessionId: id, text: "run cmd: touch approved.txt" });
    expect(sent.structuredContent).toEqual({ delivered: true, attempts: 1 });
    await world.waitFor(id, "permission_prompt");
    const status = await call("get_status", { sessionId: id });
    expect(status.structuredContent.pendingPermission).toMatchObject({
      tool: "Bash",
      detail: "touch approved.txt",
    });
    const approved = await call("approve_permission", { sessionId: id });
    expect(approved.isError).toBeUndefined();
    await world.waitFor(id, "idle");
    expect(existsSync(join(world.workDir, "approved.txt"))).toBe(true);
  }, 60_000);

  test("answer_question picks one of the question's options by its number", async () => {
    const sent = await call("send_message", { sessionId: id, text: "ask me" });
    expect(sent.structuredContent).toEqual({ delivered: true, attempts: 1 });
    await world.waitFor(id, "asking");
    const status = await call("get_status", { sessionId: id });
    expect(status.structuredContent.pendingPermission).toMatchObject({
      kind: "question",
      options: [
        { index: 1, label: "Red" },
        { index: 2, label: "Blue" },
      ],
    });
    // Approving is not answering: the error names the tool to call instead, not the REST route.
    const approved = await call("approve_permission", { sessionId: id });
    expect(approved.isError).toBe(true);
    expect(approved.content[0].text).toContain(`answer it with answer_question (sessionId "${id}")`);
    expect(approved.content[0].text).not.toContain("/v1/");
    const answered = await call("answer_question", { sessionId: id, option: 1 });
    expect(answered.isError).toBeUndefined();
    await world.waitFor(id, "idle");
    const texts = await transcriptUntil(id, (t) => t.includes('="Red"'));
    expect(texts.some((t) => t.startsWith("tool_result:") && t.includes('="Red"'))).toBe(true);
  }, 60_000);

  test("capture_pane shows the agent's screen", async () => {
    const screen = await call("capture_pane", { sessionId: id });
    expect(screen.isError).toBeUndefined();
    expect(screen.content[0].text).toContain("❯");
  });

  test("kill_session ends it; an unknown session is isError SESSION_NOT_FOUND", async () => {
    const killed = await call("kill_session", { sessionId: id });
    expect(killed.structuredContent).toMatchObject({ id, status: "killed" });
    const again = await call("kill_session", { sessionId: id });
    expect(again.isError).toBe(true);
    expect(errorOf(again)).toMatchObject({ code: "SESSION_NOT_FOUND", statusCode: 404 });
    const missing = crypto.randomUUID();
    const status = await call("get_status", { sessionId: missing });
    expect(status.isError).toBe(true);
    expect(status.content[0].text).toBe(`SESSION_NOT_FOUND: no session ${missing}`);
    // Nothing but JSON-RPC went to stdout (the SDK would have failed to parse it), and no errors logged.
    expect(stderr).not.toContain("ERROR");
  });
});

describe("tool results read as an agent reads them: the summary first, then the JSON", () => {
  /** The first text block: the plain-language summary. */
  const summary = (result: Json) => result.content[0].text as string;

  test("edit file: permission_prompt names the file and approve_permission; health hints name tools; approve moves on", async () => {
    const workDir = join(tempDir("ag-mcp-summary-"), "work");
    mkdirSync(workDir);
    const created = await call("create_session", { workDir, prompt: "edit file", reuse: false });
    expect(created.isError).toBeUndefined();
    const sessionId = created.structuredContent.id as string;
    expect(summary(created)).toStartWith(`Session "${created.structuredContent.name}" (${sessionId})`);
    expect(summary(created)).toContain("Next: ");
    // The JSON is still there, as structuredContent and as the last text block.
    expect(JSON.parse(created.content.at(-1).text)).toMatchObject({ id: sessionId, workDir });

    await world.waitFor(sessionId, "permission_prompt", 60_000);
    const status = await call("get_status", { sessionId });
    expect(summary(status)).toContain("is permission_prompt");
    expect(summary(status)).toContain(`Write: ${workDir}/hello.txt`);
    expect(summary(status)).toContain(
      `Next: call approve_permission or reject_permission (sessionId "${sessionId}")`,
    );

    const health = await call("get_session_health", { sessionId });
    expect(health.isError).toBeUndefined();
    const hints = (health.structuredContent.hints as string[]).join(" ");
    expect(hints).toContain("approve_permission");
    expect(hints).not.toContain("/v1/");
    expect(summary(health)).not.toContain("/v1/");

    const approved = await call("approve_permission", { sessionId });
    expect(approved.isError).toBeUndefined();
    expect(approved.structuredContent.status).not.toBe("permission_prompt");
    expect(approved.structuredContent.pendingPermission).toBeNull();
    expect(summary(approved)).not.toContain("permission_prompt");
    await world.waitFor(sessionId, "idle", 30_000);
    expect(existsSync(join(workDir, "hello.txt"))).toBe(true);

    const sent = await call("send_message", { sessionId, text: "ask me" });
    expect(summary(sent)).toContain("Next: call get_status");
    await world.waitFor(sessionId, "asking", 30_000);
    const asking = await call("get_status", { sessionId });
    expect(summary(asking)).toContain("is asking");
    expect(summary(asking)).toContain("options: 1. Red, 2. Blue");
    expect(summary(asking)).toContain(`call answer_question (sessionId "${sessionId}") with option 1–2`);
    const askingHints = (await call("get_session_health", { sessionId })).structuredContent.hints as string[];
    expect(askingHints.join(" ")).toContain("answer_question");
    expect(askingHints.join(" ")).not.toContain("/v1/");

    const answered = await call("answer_question", { sessionId, option: 1 });
    expect(answered.isError).toBeUndefined();
    expect(answered.structuredContent.status).not.toBe("asking");
    expect(summary(answered)).not.toContain("is asking");
    await world.waitFor(sessionId, "idle", 30_000);

    const killed = await call("kill_session", { sessionId });
    expect(summary(killed)).toContain("is killed");
    expect(summary(killed)).toContain("get_transcript");
  }, 150_000);
});

describe("the agent as an MCP client of ag mcp", () => {
  test("an agent with `ag mcp` configured calls list_sessions and reads the sessions", async () => {
    const workDir = join(tempDir("ag-mcp-agent-"), "work");
    mkdirSync(workDir);
    const config = join(workDir, "..", "mcp.json");
    writeFileSync(
      config,
      JSON.stringify({
        mcpServers: { ag: { type: "stdio", command: binary, args: ["mcp"], env: world.env } },
      }),
    );
    world.mock.addRules([
      {
        name: "mcp list",
        match: "list the ag sessions",
        steps: [
          {
            tool: { name: "mcp__ag__list_sessions", input: {} },
            fallback: { text: "the ag MCP tools are not available" },
          },
          { text: "ag answered: {{tool_result}}" },
        ],
      },
    ]);
    const created = await world.api<Json>("POST", "/v1/sessions", {
      workDir,
      prompt: "list the ag sessions",
      agentCommand: `claude --mcp-config ${config}`,
    });
    expect(created.status).toBe(201);
    const agentId = created.body.id as string;
    // The agent asks before its first use of an MCP tool: ag shows that as a permission prompt.
    const waiting = await world.waitFor(agentId, "permission_prompt");
    // Named by the hook (tool mcp__ag__list_sessions) or, when the screen is read first, by the
    // dialog ("ag - list_sessions (MCP)"): either way it is this tool.
    const pending = waiting.pendingPermission as Json;
    expect(pending).toMatchObject({ kind: "tool" });
    expect(`${pending.tool} ${pending.detail}`).toContain("list_sessions");
    expect((await world.api("POST", `/v1/sessions/${agentId}/approve`)).status).toBe(200);
    await world.waitFor(agentId, "idle");
    const texts = await transcriptUntil(agentId, (t) => t.startsWith("text: ag answered"));
    const result = texts.find((t) => t.startsWith("tool_result:"));
    // The tool's answer is the session list, which holds the agent's own session.
    expect(result).toContain(agentId);
    expect(result).toContain(workDir);
    await call("kill_session", { sessionId: agentId });
  }, 90_000);
});
