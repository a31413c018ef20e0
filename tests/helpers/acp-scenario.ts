import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { MockRequest } from "../fakes/mock-model/server.ts";
import type { AgentWorld } from "./agent-world.ts";
import { pagedIds } from "./cursor.ts";
import { saturateCores } from "./load.ts";
import { until } from "./until.ts";

// biome-ignore lint/suspicious/noExplicitAny: response bodies are inspected field by field
type Json = Record<string, any>;

/**
 * One scenario of a headless session (driver acp) on a real agent, written once and run per agent
 * (tests/e2e/acp-claude.test.ts, acp-gemini.test.ts, acp-opencode.test.ts): the agent is listed
 * with both drivers; a session created with a prompt delivers it once, ends idle with the reply;
 * terminal-only routes refuse it; on an idle machine and with both cores saturated, a shell
 * command's permission approved runs it, one rejected runs nothing, an interrupt ends a running
 * turn; a file write answered by option number is written; the transcript pages by cursor. What
 * only one agent does is its own file's, after the scenario (on the same session: `id()`), and
 * the hooks below, which add an agent's own assertions to a step.
 */
export interface AcpAgentScenario {
  /** The agent's id (GET /v1/agents). */
  agent: string;
  /** The mock model's face the agent talks to ("anthropic", "gemini", "opencode"). */
  face: string;
  world(): AgentWorld;
  /** After the first turn: the session idle (its tokens…). */
  created?(idle: Json): void | Promise<void>;
  /** The permission a shell command `command` waits on (its options, its input). */
  permission(pending: Json, command: string): void;
  /** After the approved command ran. */
  approved?(): void | Promise<void>;
  /** After the rejected command, the session idle again. */
  rejected?(): void | Promise<void>;
  /** After the interrupted turn (`prompt`), the session idle again. */
  interrupted?(prompt: string): void | Promise<void>;
  /** The permission the file write waits on. */
  edit?(pending: Json): void;
  /** The whole transcript, after its paging is checked. */
  transcript?(messages: Json[]): void;
}

export interface AcpScenarioSession {
  /** The scenario's session (created by its second test). */
  id(): string;
  send(text: string): Promise<Json>;
  reach(status: string, timeoutMs?: number): Promise<Json>;
  /** The session's transcript (`query`: the cursor route's, limit 200 unless given). */
  messages(query?: string): Promise<Json[]>;
  /** The main-loop requests the agent made through the face, one per turn (not per tool round). */
  turns(): MockRequest[];
}

export function acpAgentScenario(s: AcpAgentScenario): AcpScenarioSession {
  let id = "";
  const api = <T = Json>(method: string, path: string, body?: unknown) =>
    s.world().api<T>(method, path, body);
  const session: AcpScenarioSession = {
    id: () => id,
    send: async (text) => (await api("POST", `/v1/sessions/${id}/send`, { text })).body,
    reach: (status, timeoutMs = 40_000) => s.world().waitFor(id, status, timeoutMs) as Promise<Json>,
    messages: async (query = "limit=200") =>
      (await api(`GET`, `/v1/sessions/${id}/transcript/cursor?${query}`)).body.messages as Json[],
    turns: () =>
      s
        .world()
        .mock.requests()
        .filter((r) => r.face === s.face && r.kind === "main" && r.round === 0),
  };
  const { send, reach } = session;
  const workFile = (name: string) => join(s.world().workDir, name);

  test(`GET /v1/agents: ${s.agent} has both drivers`, async () => {
    const agents = (await api<Json[]>("GET", "/v1/agents")).body;
    expect(agents.find((a) => a.id === s.agent)?.drivers).toEqual(["tmux", "acp"]);
  });

  test(`create {agent: ${s.agent}, driver: acp}: the prompt reaches the model once, idle, /read has the reply`, async () => {
    const created = await api("POST", "/v1/sessions", {
      agent: s.agent,
      driver: "acp",
      workDir: s.world().workDir,
      prompt: "say hello",
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ driver: "acp", promptDelivery: { delivered: true, attempts: 1 } });
    id = created.body.id;
    const idle = await reach("idle");
    expect(session.turns().map((r) => r.prompt)).toEqual(["say hello"]);
    expect((await api("GET", `/v1/sessions/${id}/read`)).body.output).toContain("Hello from the mock model!");
    await s.created?.(idle);
  }, 90_000);

  test("terminal-only routes answer 409 NOT_A_TERMINAL_SESSION", async () => {
    const pane = await api("GET", `/v1/sessions/${id}/pane`);
    expect([pane.status, pane.body.code]).toEqual([409, "NOT_A_TERMINAL_SESSION"]);
    const spawn = await api("POST", `/v1/sessions/${id}/spawn`, { prompt: "hi" });
    expect(spawn.body.code).toBe("NOT_A_TERMINAL_SESSION");
    const esc = await api("POST", `/v1/sessions/${id}/escape`);
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
        const command = `touch approved-${tag}.txt`;
        expect(await send(`run cmd: ${command}`)).toEqual({ delivered: true, attempts: 1 });
        const waiting = await reach("permission_prompt");
        expect(waiting.pendingPermission).toMatchObject({ kind: "tool", tool: "execute" });
        s.permission(waiting.pendingPermission, command);
        const approved = await api("POST", `/v1/sessions/${id}/approve`, {
          permissionId: waiting.pendingPermission.id,
        });
        expect(approved.status).toBe(200);
        await reach("idle");
        expect(existsSync(workFile(`approved-${tag}.txt`))).toBe(true);
        await s.approved?.();
      }, 60_000);

      test("a permission rejected: nothing runs, the session is idle again", async () => {
        expect(await send(`run cmd: touch rejected-${tag}.txt`)).toEqual({ delivered: true, attempts: 1 });
        await reach("permission_prompt");
        expect((await api("POST", `/v1/sessions/${id}/reject`)).status).toBe(200);
        await reach("idle");
        expect(existsSync(workFile(`rejected-${tag}.txt`))).toBe(false);
        await s.rejected?.();
      }, 60_000);

      test("interrupt mid-turn: session/cancel ends the turn, idle again", async () => {
        const prompt = `slow 20 ${tag}`;
        expect(await send(prompt)).toEqual({ delivered: true, attempts: 1 });
        await reach("working", 10_000);
        // Under way: the model has the turn's request (its reply streams for 20 s).
        await until(() => session.turns().some((r) => r.prompt === prompt), 20_000);
        expect((await api("POST", `/v1/sessions/${id}/interrupt`)).status).toBe(200);
        await reach("idle", 15_000);
        await s.interrupted?.(prompt);
      }, 60_000);
    });
  }

  test("a file write answered by option number: the file is written", async () => {
    expect(await send("edit file")).toEqual({ delivered: true, attempts: 1 });
    const waiting = await reach("permission_prompt");
    s.edit?.(waiting.pendingPermission);
    const once = waiting.pendingPermission.options.find((o: Json) => o.description === "allow_once");
    expect((await api("POST", `/v1/sessions/${id}/answer`, { option: once.index })).status).toBe(200);
    await reach("idle");
    expect(readFileSync(workFile("hello.txt"), "utf8")).toBe("hello from the mock\n");
  }, 60_000);

  test("the transcript ag keeps pages by cursor without gaps or overlaps", async () => {
    const all = await session.messages();
    expect(all.length).toBeGreaterThan(6);
    const seen = await pagedIds(async (path) => (await api("GET", path)).body, id);
    expect(seen).toEqual(all.map((m) => m.id));
    expect(all[0]).toMatchObject({ role: "user", kind: "prompt", text: "say hello" });
    const users = await session.messages("role=user&limit=200");
    expect(users.some((m) => m.kind === "prompt" && m.text === "edit file")).toBe(true);
    s.transcript?.(all);
  });

  return session;
}
