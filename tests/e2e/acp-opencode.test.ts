import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { type AgentWorld, startAgentWorld } from "../helpers/agent-world.ts";
import { pagedIds } from "../helpers/cursor.ts";
import { saturateCores } from "../helpers/load.ts";
import { until } from "../helpers/until.ts";

// biome-ignore lint/suspicious/noExplicitAny: response bodies are inspected field by field
type Json = Record<string, any>;

/**
 * A headless session (driver acp) on the REAL OpenCode (`opencode acp`, opencode-ai 1.18.33)
 * through the compiled binary, against the mock model's OpenCode face. The tests run in order
 * on one session.
 */
let world: AgentWorld;
let id: string;

beforeAll(async () => {
  world = await startAgentWorld({}, { agents: ["opencode"] });
}, 60_000);
afterAll(async () => {
  await world?.stop();
});

/** The main-loop requests OpenCode made for the session, one per turn (not per tool round). */
const turns = () =>
  world.mock
    .requests()
    .filter((r) => r.face === "opencode" && r.kind === "main" && r.round === 0)
    .filter((r) => r.history?.[0] === "say hello");
const send = async (text: string, session = id) =>
  (await world.api<Json>("POST", `/v1/sessions/${session}/send`, { text })).body;
const reach = (status: string, timeoutMs = 40_000, session = id) =>
  world.waitFor(session, status, timeoutMs) as Promise<Json>;
const cursor = async (query = "limit=200") =>
  (await world.api<Json>("GET", `/v1/sessions/${id}/transcript/cursor?${query}`)).body;

describe("an OpenCode session over ACP", () => {
  test("GET /v1/agents: opencode has both drivers", async () => {
    const agents = (await world.api<Json[]>("GET", "/v1/agents")).body;
    expect(agents.find((a) => a.id === "opencode")?.drivers).toEqual(["tmux", "acp"]);
  });

  test("create {agent: opencode, driver: acp}: the prompt reaches the model once, idle, /read has the reply, tokens counted", async () => {
    const created = await world.api<Json>("POST", "/v1/sessions", {
      agent: "opencode",
      driver: "acp",
      workDir: world.workDir,
      prompt: "say hello",
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ driver: "acp", promptDelivery: { delivered: true, attempts: 1 } });
    id = created.body.id;
    const idle = await reach("idle");
    expect(turns().map((r) => r.prompt)).toEqual(["say hello"]);
    const read = await world.api<Json>("GET", `/v1/sessions/${id}/read`);
    expect(read.body.output).toContain("Hello from the mock model!");
    // OpenCode reports the tokens in ACP's own `usage` of the prompt response.
    expect(idle.tokenUsage.input).toBeGreaterThan(0);
    expect(idle.tokenUsage.output).toBeGreaterThan(0);
    expect(idle.tokenUsage.cacheRead).toBeGreaterThan(0);
    // Under the model its session/new names ("mock/claude-sonnet-4-5"): priced as a Sonnet.
    const metrics = (await world.api<Json>("GET", `/v1/sessions/${id}/metrics`)).body;
    expect(metrics.estimatedCost.unpriced).toEqual([]);
    expect(metrics.estimatedCost.usd).toBeGreaterThan(0);
  }, 90_000);

  test("terminal-only routes answer 409 NOT_A_TERMINAL_SESSION", async () => {
    const pane = await world.api<Json>("GET", `/v1/sessions/${id}/pane`);
    expect([pane.status, pane.body.code]).toEqual([409, "NOT_A_TERMINAL_SESSION"]);
    const esc = await world.api<Json>("POST", `/v1/sessions/${id}/escape`);
    expect(esc.body.code).toBe("NOT_A_TERMINAL_SESSION");
  });

  for (const loaded of [false, true]) {
    describe(loaded ? "with both cores saturated" : "on an idle machine", () => {
      let load: { stop(): Promise<void> } | null = null;
      const tag = loaded ? "loaded" : "idle";
      beforeAll(() => {
        if (loaded) load = saturateCores(2, 120_000);
      });
      afterAll(async () => {
        await load?.stop();
      });

      test("a command's permission, approved: the command runs", async () => {
        expect(await send(`run cmd: touch approved-${tag}.txt`)).toEqual({ delivered: true, attempts: 1 });
        const waiting = await reach("permission_prompt");
        expect(waiting.pendingPermission).toMatchObject({
          kind: "tool",
          tool: "execute",
          detail: `touch approved-${tag}.txt`,
        });
        expect(waiting.pendingPermission.options.map((o: Json) => o.description)).toEqual([
          "allow_once",
          "allow_always",
          "reject_once",
        ]);
        expect(waiting.pendingPermission.toolInput.rawInput).toEqual({
          command: `touch approved-${tag}.txt`,
        });
        const approved = await world.api("POST", `/v1/sessions/${id}/approve`, {
          permissionId: waiting.pendingPermission.id,
        });
        expect(approved.status).toBe(200);
        await reach("idle");
        expect(existsSync(join(world.workDir, `approved-${tag}.txt`))).toBe(true);
      }, 60_000);

      test("a permission rejected: nothing runs, the session is idle again", async () => {
        expect(await send(`run cmd: touch rejected-${tag}.txt`)).toEqual({ delivered: true, attempts: 1 });
        await reach("permission_prompt");
        expect((await world.api("POST", `/v1/sessions/${id}/reject`)).status).toBe(200);
        await reach("idle");
        expect(existsSync(join(world.workDir, `rejected-${tag}.txt`))).toBe(false);
        const results = (await cursor()).messages.filter((m: Json) => m.kind === "tool_result");
        expect(results.at(-1)).toMatchObject({ isError: true });
      }, 60_000);

      test("interrupt mid-turn: session/cancel ends the turn, OpenCode hangs up on the model", async () => {
        expect(await send(`slow 20 ${tag}`)).toEqual({ delivered: true, attempts: 1 });
        await reach("working", 10_000);
        await Bun.sleep(1_000);
        expect((await world.api("POST", `/v1/sessions/${id}/interrupt`)).status).toBe(200);
        await reach("idle", 15_000);
        // The mock marks the request once it sees the connection dropped (it may lag the response).
        await until(() => turns().find((r) => r.prompt === `slow 20 ${tag}`)?.status === "aborted", 5_000);
        expect((await cursor()).messages.at(-1)).toMatchObject({ subtype: "turn_end", text: "cancelled" });
      }, 60_000);
    });
  }

  test("a file write answered by option number: the file is written", async () => {
    expect(await send("edit file")).toEqual({ delivered: true, attempts: 1 });
    const waiting = await reach("permission_prompt");
    expect(waiting.pendingPermission).toMatchObject({
      tool: "edit",
      detail: join(world.workDir, "hello.txt"),
    });
    const once = waiting.pendingPermission.options.find((o: Json) => o.description === "allow_once");
    expect((await world.api("POST", `/v1/sessions/${id}/answer`, { option: once.index })).status).toBe(200);
    await reach("idle");
    expect(readFileSync(join(world.workDir, "hello.txt"), "utf8")).toBe("hello from the mock\n");
  }, 60_000);

  test("the transcript ag keeps pages by cursor without gaps or overlaps", async () => {
    const all = await cursor();
    expect(all.messages.length).toBeGreaterThan(6);
    const seen = await pagedIds(async (path) => (await world.api<Json>("GET", path)).body, id);
    expect(seen).toEqual(all.messages.map((m: Json) => m.id));
    expect(all.messages[0]).toMatchObject({ role: "user", kind: "prompt", text: "say hello" });
    const users = await cursor("role=user&limit=200");
    expect(users.messages.some((m: Json) => m.kind === "prompt" && m.text === "edit file")).toBe(true);
  });

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
    await reach("idle", 60_000, other);
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
    await reach("idle", 60_000, other);
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
    const before = (await cursor()).messages;
    const tokens = (await world.api<Json>("GET", `/v1/sessions/${id}`)).body.tokenUsage;
    const history = turns().at(-1)?.history ?? [];
    expect(history[0]).toBe("say hello");
    await world.restart();
    // From ag's first answer on, the conversation reads whole, however long OpenCode takes to
    // come back (ag announces itself after at most 5 s of re-adoption: a loaded machine takes longer).
    expect((await cursor()).messages.slice(0, before.length)).toEqual(before);
    // Reopened: ag's note follows what it kept (what OpenCode replays is not written again).
    let page: Json[] = [];
    await until(async () => {
      page = (await cursor()).messages;
      return page.length > before.length;
    }, 60_000);
    expect(page.slice(0, before.length)).toEqual(before);
    expect(page.slice(before.length)).toMatchObject([{ role: "system", subtype: "reopened" }]);
    const after = await reach("idle");
    expect(after.driver).toBe("acp");
    expect(after.tokenUsage).toEqual(tokens);

    expect(await send("what did I say first?")).toEqual({ delivered: true, attempts: 1 });
    await reach("idle");
    expect(turns().at(-1)?.history).toEqual([...history, "what did I say first?"]);
    const read = await world.api<Json>("GET", `/v1/sessions/${id}/read`);
    expect(read.body.output).toContain("Mock reply to: what did I say first?");
  }, 120_000);
});
