import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { type AgentWorld, startAgentWorld } from "../helpers/agent-world.ts";
import { pagedIds } from "../helpers/cursor.ts";
import { saturateCores } from "../helpers/load.ts";

// biome-ignore lint/suspicious/noExplicitAny: response bodies are inspected field by field
type Json = Record<string, any>;

/**
 * A headless session (driver acp) on the REAL Gemini CLI (`gemini --acp`, 0.61.0) through the
 * compiled binary, against the mock model's Gemini face. The tests run in order on one session.
 */
let world: AgentWorld;
let id: string;

beforeAll(async () => {
  world = await startAgentWorld({}, { agents: ["gemini"] });
}, 60_000);
afterAll(async () => {
  await world?.stop();
});

const geminiPrompts = () =>
  world.mock
    .requests()
    .filter((r) => r.face === "gemini" && r.kind === "main" && r.round === 0)
    .map((r) => r.prompt);
const send = async (text: string) =>
  (await world.api<Json>("POST", `/v1/sessions/${id}/send`, { text })).body;
const reach = (status: string, timeoutMs = 40_000) => world.waitFor(id, status, timeoutMs) as Promise<Json>;

describe("a Gemini CLI session over ACP", () => {
  test("GET /v1/agents: gemini has both drivers", async () => {
    const agents = (await world.api<Json[]>("GET", "/v1/agents")).body;
    expect(agents.find((a) => a.id === "gemini")?.drivers).toEqual(["tmux", "acp"]);
  });

  test("create {agent: gemini, driver: acp}: the prompt reaches the model once, idle, /read has the reply", async () => {
    const created = await world.api<Json>("POST", "/v1/sessions", {
      agent: "gemini",
      driver: "acp",
      workDir: world.workDir,
      prompt: "say hello",
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ driver: "acp", promptDelivery: { delivered: true, attempts: 1 } });
    id = created.body.id;
    const idle = await reach("idle");
    expect(geminiPrompts()).toEqual(["say hello"]);
    const read = await world.api<Json>("GET", `/v1/sessions/${id}/read`);
    expect(read.body.output).toContain("Hello from the mock model!");
    // Gemini reports a turn's tokens in the prompt response's _meta.quota.
    expect(idle.tokenUsage.input).toBeGreaterThan(0);
    expect(idle.tokenUsage.output).toBeGreaterThan(0);
  }, 90_000);

  test("terminal-only routes answer 409 NOT_A_TERMINAL_SESSION", async () => {
    const pane = await world.api<Json>("GET", `/v1/sessions/${id}/pane`);
    expect(pane.status).toBe(409);
    expect(pane.body.code).toBe("NOT_A_TERMINAL_SESSION");
    const spawn = await world.api<Json>("POST", `/v1/sessions/${id}/spawn`, { prompt: "hi" });
    expect(spawn.body.code).toBe("NOT_A_TERMINAL_SESSION");
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

      test("a shell command's permission, approved: the command runs", async () => {
        expect(await send(`run cmd: touch approved-${tag}.txt`)).toEqual({ delivered: true, attempts: 1 });
        const waiting = await reach("permission_prompt");
        expect(waiting.pendingPermission).toMatchObject({ kind: "tool", tool: "execute" });
        expect(waiting.pendingPermission.options.map((o: Json) => o.description)).toContain("allow_once");
        expect(waiting.pendingPermission.toolInput).toBeDefined();
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
      }, 60_000);

      test("interrupt mid-turn: session/cancel ends the turn as interrupted", async () => {
        expect(await send("slow 20")).toEqual({ delivered: true, attempts: 1 });
        await reach("working", 10_000);
        await Bun.sleep(1_000);
        expect((await world.api("POST", `/v1/sessions/${id}/interrupt`)).status).toBe(200);
        await reach("idle", 15_000);
      }, 60_000);
    });
  }

  test("a file write answered by option number: the file is written", async () => {
    expect(await send("edit file")).toEqual({ delivered: true, attempts: 1 });
    const waiting = await reach("permission_prompt");
    const once = waiting.pendingPermission.options.find((o: Json) => o.description === "allow_once");
    expect((await world.api("POST", `/v1/sessions/${id}/answer`, { option: once.index })).status).toBe(200);
    await reach("idle");
    expect(readFileSync(join(world.workDir, "hello.txt"), "utf8")).toBe("hello from the mock\n");
  }, 60_000);

  test("the transcript ag keeps pages by cursor without gaps or overlaps", async () => {
    const all = (await world.api<Json>("GET", `/v1/sessions/${id}/transcript/cursor?limit=200`)).body;
    expect(all.messages.length).toBeGreaterThan(6);
    const seen = await pagedIds(async (path) => (await world.api<Json>("GET", path)).body, id);
    expect(seen).toEqual(all.messages.map((m: Json) => m.id));
    expect(all.messages[0]).toMatchObject({ role: "user", kind: "prompt", text: "say hello" });
    const users = (await world.api<Json>("GET", `/v1/sessions/${id}/transcript/cursor?role=user&limit=200`))
      .body;
    expect(users.messages.some((m: Json) => m.kind === "prompt" && m.text === "edit file")).toBe(true);
  });

  test("kill ends the session and its agent", async () => {
    const created = await world.api<Json>("POST", "/v1/sessions", {
      agent: "gemini",
      driver: "acp",
      workDir: world.workDir,
      reuse: false,
    });
    expect(created.status).toBe(201);
    const killed = await world.api<Json>("DELETE", `/v1/sessions/${created.body.id}`);
    expect(killed.status).toBe(200);
    expect(killed.body.status).toBe("killed");
  }, 60_000);

  /**
   * Gemini CLI 0.61.0 advertises loadSession, and its session/load mostly answers "No previous
   * sessions found for this project" for a conversation of an earlier process (also outside ag:
   * a bare client, the same HOME and cwd); once, on a loaded machine (CI with other real agents
   * running), it found the conversation and reopened it. Both ends are ag's to get right: reopened,
   * the transcript kept with ag's note after it and the session answering again; else crashed
   * (driver_restart), the transcript kept (docs/drivers.md).
   */
  test("ag restarted while the session is idle: reopened if Gemini finds its conversation, else crashed; the transcript kept either way", async () => {
    const before = (await world.api<Json>("GET", `/v1/sessions/${id}/transcript/cursor?limit=200`)).body;
    await world.restart();
    const page = async () =>
      (await world.api<Json>("GET", `/v1/sessions/${id}/transcript/cursor?limit=200`)).body
        .messages as Json[];
    let outcome: "crashed" | "reopened" | null = null;
    for (const deadline = Date.now() + 60_000; outcome === null && Date.now() < deadline; ) {
      const status = (await world.api<Json>("GET", `/v1/sessions/${id}`)).body.status;
      if (status === "crashed") outcome = "crashed";
      else if ((await page()).some((m) => m.subtype === "reopened")) outcome = "reopened";
      else await Bun.sleep(200);
    }
    if (outcome === "crashed") {
      expect((await world.api<Json>("GET", `/v1/sessions/${id}`)).body).toMatchObject({
        driver: "acp",
        endReason: "driver_restart",
      });
      expect(await page()).toEqual(before.messages);
      return;
    }
    expect(outcome).toBe("reopened");
    const messages = await page();
    expect(messages.slice(0, before.messages.length)).toEqual(before.messages);
    expect(messages.slice(before.messages.length)).toMatchObject([{ role: "system", subtype: "reopened" }]);
    await reach("idle");
    expect(await send("say hello")).toEqual({ delivered: true, attempts: 1 });
    await reach("idle");
    expect(geminiPrompts().at(-1)).toBe("say hello");
  }, 120_000);
});
