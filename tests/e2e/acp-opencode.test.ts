import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { acpAgentScenario } from "../helpers/acp-scenario.ts";
import { type AgentWorld, startAgentWorld } from "../helpers/agent-world.ts";
import { until } from "../helpers/until.ts";

// biome-ignore lint/suspicious/noExplicitAny: response bodies are inspected field by field
type Json = Record<string, any>;

/**
 * A headless session (driver acp) on the REAL OpenCode (`opencode acp`, opencode-ai 1.18.33)
 * through the compiled binary, against the mock model's OpenCode face. The tests run in order
 * on one session: the scenario every ACP agent runs (tests/helpers/acp-scenario.ts), then
 * OpenCode's own.
 */
let world: AgentWorld;

beforeAll(async () => {
  world = await startAgentWorld({}, { agents: ["opencode"] });
}, 60_000);
afterAll(async () => {
  await world?.stop();
});

describe("an OpenCode session over ACP", () => {
  const { id, send, reach, messages, turns } = acpAgentScenario({
    agent: "opencode",
    face: "opencode",
    world: () => world,
    async created(idle) {
      // OpenCode reports the tokens in ACP's own `usage` of the prompt response.
      expect(idle.tokenUsage.input).toBeGreaterThan(0);
      expect(idle.tokenUsage.output).toBeGreaterThan(0);
      expect(idle.tokenUsage.cacheRead).toBeGreaterThan(0);
      // Under the model its session/new names ("mock/claude-sonnet-4-5"): priced as a Sonnet.
      const metrics = (await world.api<Json>("GET", `/v1/sessions/${id()}/metrics`)).body;
      expect(metrics.estimatedCost.unpriced).toEqual([]);
      expect(metrics.estimatedCost.usd).toBeGreaterThan(0);
    },
    permission(pending, command) {
      expect(pending).toMatchObject({ detail: command });
      expect(pending.options.map((o: Json) => o.description)).toEqual([
        "allow_once",
        "allow_always",
        "reject_once",
      ]);
      expect(pending.toolInput.rawInput).toEqual({ command });
    },
    async rejected() {
      const results = (await messages()).filter((m) => m.kind === "tool_result");
      expect(results.at(-1)).toMatchObject({ isError: true });
    },
    async interrupted(prompt) {
      // OpenCode hangs up on the model. The mock marks the request once it sees the connection
      // dropped (it may lag the response).
      await until(() => turns().find((r) => r.prompt === prompt)?.status === "aborted", 5_000);
      expect((await messages()).at(-1)).toMatchObject({ subtype: "turn_end", text: "cancelled" });
    },
    edit(pending) {
      expect(pending).toMatchObject({ tool: "edit", detail: join(world.workDir, "hello.txt") });
    },
  });
  /** The main-loop requests OpenCode made for the session, one per turn (not per tool round). */
  const sessionTurns = () => turns().filter((r) => r.history?.[0] === "say hello");

  test("bypassPermissions: ag approves what OpenCode asks (its TUI's --auto); kill ends the session", async () => {
    // A command outside the workDir: OpenCode's own rules ask (external_directory) in every mode.
    const outside = join(dirname(world.workDir), "bypassed.txt");
    const created = await world.api<Json>("POST", "/v1/sessions", {
      agent: "opencode",
      driver: "acp",
      permissionMode: "bypassPermissions",
      workDir: world.workDir,
      prompt: `run cmd: touch ${outside}`,
      reuse: false,
    });
    expect(created.status).toBe(201);
    const other = created.body.id;
    await world.waitFor(other, "idle", 60_000);
    expect(existsSync(outside)).toBe(true);
    const events = (await world.api<Json>("GET", `/v1/sessions/${other}/transcript/cursor?limit=200`)).body;
    expect(events.messages.filter((m: Json) => m.kind === "tool_result")).toMatchObject([{ isError: false }]);
    const killed = await world.api<Json>("DELETE", `/v1/sessions/${other}`);
    expect([killed.status, killed.body.status]).toEqual([200, "killed"]);
  }, 90_000);

  test("plan: OpenCode's read-only agent (the session config's default_agent) is denied the edit, without asking", async () => {
    const created = await world.api<Json>("POST", "/v1/sessions", {
      agent: "opencode",
      driver: "acp",
      permissionMode: "plan",
      workDir: world.workDir,
      prompt: "change file",
      reuse: false,
    });
    expect(created.status).toBe(201);
    const other = created.body.id;
    await world.waitFor(other, "idle", 60_000);
    expect(readFileSync(join(world.workDir, "hello.txt"), "utf8")).toBe("hello from the mock\n");
    const page = (await world.api<Json>("GET", `/v1/sessions/${other}/transcript/cursor?limit=200`)).body;
    const results = page.messages.filter((m: Json) => m.kind === "tool_result");
    expect(results.at(-1)).toMatchObject({ isError: true });
    expect(results.at(-1).text).toContain("prevents you from using this specific tool call");
    expect((await world.api<Json>("DELETE", `/v1/sessions/${other}`)).body.status).toBe("killed");
  }, 90_000);

  /**
   * OpenCode keeps its conversations in its own data dir (under HOME), and its session/load
   * reopens one of an earlier process: the restart reopens the session, and the model's next
   * request carries the whole conversation.
   */
  test("ag restarted while the session is idle: reopened by session/load, the conversation kept", async () => {
    const before = await messages();
    const tokens = (await world.api<Json>("GET", `/v1/sessions/${id()}`)).body.tokenUsage;
    const history = sessionTurns().at(-1)?.history ?? [];
    expect(history[0]).toBe("say hello");
    await world.restart();
    // From ag's first answer on, the conversation reads whole, however long OpenCode takes to
    // come back (ag announces itself after at most 5 s of re-adoption: a loaded machine takes longer).
    expect((await messages()).slice(0, before.length)).toEqual(before);
    // Reopened: ag's note follows what it kept (what OpenCode replays is not written again).
    let page: Json[] = [];
    await until(async () => {
      page = await messages();
      return page.length > before.length;
    }, 60_000);
    expect(page.slice(0, before.length)).toEqual(before);
    expect(page.slice(before.length)).toMatchObject([{ role: "system", subtype: "reopened" }]);
    const after = await reach("idle");
    expect(after.driver).toBe("acp");
    expect(after.tokenUsage).toEqual(tokens);

    expect(await send("what did I say first?")).toEqual({ delivered: true, attempts: 1 });
    await reach("idle");
    expect(sessionTurns().at(-1)?.history).toEqual([...history, "what did I say first?"]);
    const read = await world.api<Json>("GET", `/v1/sessions/${id()}/read`);
    expect(read.body.output).toContain("Mock reply to: what did I say first?");
  }, 120_000);
});
