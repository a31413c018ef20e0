import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { type AgentWorld, startAgentWorld } from "../helpers/agent-world.ts";
import { compiledBinary, runAg } from "../helpers/binary.ts";
import { gitRepository } from "../helpers/git.ts";
import { tempDir } from "../helpers/temp.ts";

// biome-ignore lint/suspicious/noExplicitAny: response bodies are inspected field by field
type Json = Record<string, any>;

/**
 * Templates, pipelines and consensus reviewers that choose the headless driver, on the REAL
 * Gemini CLI (`gemini --acp`) through the compiled binary and the mock model's Gemini face.
 */
let world: AgentWorld;

beforeAll(async () => {
  world = await startAgentWorld({ SVC_CONSENSUS_TIMEOUT_MS: "60000" }, { agents: ["gemini"] });
  gitRepository(world.workDir);
}, 60_000);
afterAll(async () => {
  await world?.stop();
});

const geminiPrompts = () =>
  world.mock
    .requests()
    .filter((r) => r.face === "gemini" && r.kind === "main" && r.round === 0)
    .map((r) => r.prompt ?? "");

async function until<T extends Json>(path: string, done: (body: T) => boolean, ms = 90_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const { body } = await world.api<T>("GET", path);
    if (done(body)) return body;
    if (Date.now() > deadline) throw new Error(`${path} still ${JSON.stringify(body).slice(0, 400)}`);
    await Bun.sleep(200);
  }
}

describe("orchestration over ACP", () => {
  test("ag run --agent gemini --driver acp: a headless session, its reply streamed at the terminal", async () => {
    const binary = await compiledBinary();
    const cli = (args: string[]) => runAg(binary, args, { env: world.env, cwd: world.workDir });
    const run = await cli(["run", "say hello", "--agent", "gemini", "--driver", "acp", "--new"]);
    expect(run.exitCode).toBe(0);
    expect(run.stdout).toContain("Hello from the mock model!");
    const id = run.stderr.match(/session \S+ \(([0-9a-f-]{36})\)/)![1]!;
    expect((await world.api<Json>("GET", `/v1/sessions/${id}`)).body).toMatchObject({
      agent: "gemini",
      driver: "acp",
      status: "idle",
    });
    const wrong = await cli(["run", "say hello", "--driver", "screen"]);
    expect(wrong.exitCode).not.toBe(0);
    expect(wrong.stderr).toContain("--driver is tmux or acp, not screen");
    expect((await world.api("DELETE", `/v1/sessions/${id}`)).status).toBe(200);
  }, 90_000);

  test("a template with driver acp: the session made from it runs headless; one copied from it keeps the driver", async () => {
    const template = await world.api<Json>("POST", "/v1/templates", {
      name: "headless-gemini",
      agent: "gemini",
      driver: "acp",
      workDir: world.workDir,
    });
    expect(template.status).toBe(201);
    expect(template.body).toMatchObject({ agent: "gemini", driver: "acp" });
    const created = await world.api<Json>("POST", "/v1/sessions", {
      templateId: template.body.id,
      prompt: "say hello",
      reuse: false,
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ agent: "gemini", driver: "acp" });
    await world.waitFor(created.body.id, "idle", 60_000);
    const read = await world.api<Json>("GET", `/v1/sessions/${created.body.id}/read`);
    expect(read.body.output).toContain("Hello from the mock model!");
    const copied = await world.api<Json>("POST", "/v1/templates", {
      name: "copied",
      sessionId: created.body.id,
    });
    expect(copied.body).toMatchObject({ agent: "gemini", driver: "acp" });
    expect((await world.api("DELETE", `/v1/sessions/${created.body.id}`)).status).toBe(200);
  }, 90_000);

  test("a pipeline whose stages run over ACP: in order, each headless, the second given the first's output", async () => {
    const created = await world.api<Json>("POST", "/v1/pipelines", {
      name: "headless",
      workDir: world.workDir,
      stages: [
        { name: "hello", prompt: "say hello", agent: "gemini", driver: "acp" },
        { prompt: "summarise that", agent: "gemini", driver: "acp" },
      ],
    });
    expect(created.status).toBe(201);
    expect(created.body.stages.map((s: Json) => s.driver)).toEqual(["acp", "acp"]);
    const done = await until<Json>(`/v1/pipelines/${created.body.id}`, (p) =>
      ["completed", "failed"].includes(p.status),
    );
    expect(done.status).toBe("completed");
    const [first, second] = done.stages;
    expect(first.output).toContain("Hello from the mock model!");
    const prompts = geminiPrompts();
    expect(prompts).toContain(`[Previous stage output]\n${first.output}\n\nsummarise that`);
    for (const stage of [first, second]) {
      const session = (await world.api<Json>("GET", `/v1/sessions/${stage.sessionId}`)).body;
      expect(session).toMatchObject({ agent: "gemini", driver: "acp", status: "killed" });
    }
  }, 120_000);

  test("consensus reviewers over ACP: headless, plan mode, readonly, their verdicts counted", async () => {
    // The reviewed session: a headless Gemini that wrote hello.txt (approved).
    const target = await world.api<Json>("POST", "/v1/sessions", {
      agent: "gemini",
      driver: "acp",
      workDir: world.workDir,
      prompt: "edit file",
      reuse: false,
    });
    const waiting = await world.waitFor(target.body.id, "permission_prompt", 60_000);
    await world.api("POST", `/v1/sessions/${target.body.id}/approve`, {
      permissionId: (waiting.pendingPermission as Json).id,
    });
    await world.waitFor(target.body.id, "idle", 60_000);
    world.mock.addRules(
      [
        {
          name: "review",
          match: "independent reviewers",
          reply: { text: "CRITERION 1: PASS — hello.txt greets\nVERDICT: APPROVE" },
        },
      ],
      { replace: true },
    );
    const started = await world.api<Json>("POST", `/v1/sessions/${target.body.id}/consensus`, {
      criteria: ["hello.txt greets the reader"],
      reviewers: 2,
      agent: "gemini",
      driver: "acp",
    });
    expect(started.status).toBe(202);
    expect(started.body.reviewers.map((r: Json) => r.driver)).toEqual(["acp", "acp"]);
    const record = await until<Json>(`/v1/consensus/${started.body.id}`, (c) => c.status !== "running");
    expect(record).toMatchObject({ status: "completed", verdict: "approve", counted: 2 });
    for (const reviewer of record.reviewers) {
      const session = (await world.api<Json>("GET", `/v1/sessions/${reviewer.sessionId}`)).body;
      expect(session).toMatchObject({ agent: "gemini", driver: "acp", permissionMode: "plan" });
      expect(session.permissions.profile).toBe("readonly");
    }
  }, 150_000);

  test("offerMcp: the agent is offered ag's own MCP server with a key of its own, which dies with the session", async () => {
    // The fake ACP agent as the Gemini entry's program: `mcp TOOL` runs the offered server (the
    // compiled binary's `ag mcp`) with the MCP SDK's client and calls that tool.
    const fake = join(import.meta.dir, "..", "fakes", "acp-agent.ts");
    const agentCommand = [process.execPath, fake, "--state", tempDir("ag-fake-mcp-")].join(" ");
    const created = await world.api<Json>("POST", "/v1/sessions", {
      agent: "gemini",
      driver: "acp",
      agentCommand,
      offerMcp: true,
      workDir: world.workDir,
      name: "orchestrator",
      prompt: "mcp list_sessions",
      reuse: false,
    });
    expect(created.status).toBe(201);
    const id = created.body.id as string;
    await world.waitFor(id, "idle", 60_000);
    const read = (await world.api<Json>("GET", `/v1/sessions/${id}/read`)).body;
    expect(read.output).toStartWith("mcp list_sessions: ");
    expect(read.output).toContain(id);
    const keyName = `session ${id} (ag mcp)`;
    const keys = (await world.api<Json[]>("GET", "/v1/auth/keys")).body;
    // Its own key, bound to it: sessions and memory, never pipelines (server-wide) nor admin.
    expect(keys.find((k) => k.name === keyName)).toMatchObject({ sessionId: id, tenantId: null });
    expect(keys.find((k) => k.name === keyName)?.scopes).toEqual([
      "sessions:read",
      "sessions:write",
      "memory:read",
      "memory:write",
      "templates:read",
    ]);
    expect((await world.api("DELETE", `/v1/sessions/${id}`)).status).toBe(200);
    const after = (await world.api<Json[]>("GET", "/v1/auth/keys")).body;
    expect(after.some((k) => k.name === keyName)).toBe(false);
    // Without it, nothing is offered; a terminal session cannot ask for it.
    const plain = await world.api<Json>("POST", "/v1/sessions", {
      agent: "gemini",
      driver: "acp",
      agentCommand,
      workDir: world.workDir,
      prompt: "mcp list_sessions",
      reuse: false,
    });
    await world.waitFor(plain.body.id, "idle", 60_000);
    expect((await world.api<Json>("GET", `/v1/sessions/${plain.body.id}/read`)).body.output).toBe(
      "mcp list_sessions: no MCP server was offered",
    );
    const refused = await world.api<Json>("POST", "/v1/sessions", {
      workDir: world.workDir,
      offerMcp: true,
      reuse: false,
    });
    expect(refused.status).toBe(400);
    expect(refused.body.code).toBe("VALIDATION_ERROR");
  }, 120_000);
});
