import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { type AgentWorld, startAgentWorld } from "../helpers/agent-world.ts";
import { saturateCores } from "../helpers/load.ts";

// biome-ignore lint/suspicious/noExplicitAny: response bodies are inspected field by field
type Json = Record<string, any>;

/**
 * OpenCode as an agent of ag, end to end: the compiled binary runs the REAL OpenCode CLI
 * (opencode-ai 1.18.33) in tmux against the mock model, through ag's plugin for hooks, policy
 * and the conversation file. The states a session goes through are run twice: on an idle
 * machine, and with both cores saturated by busy loops. One OpenCode at a time (each takes
 * ~0.9 GB); the tests of a world run in order on one session.
 */
const TURN_MS = 60_000;

for (const loaded of [false, true]) {
  describe(loaded ? "OpenCode with both cores saturated" : "OpenCode on an idle machine", () => {
    let world: AgentWorld;
    let load: { stop(): Promise<void> } | null = null;
    let id: string;

    beforeAll(async () => {
      world = await startAgentWorld({}, { agents: ["opencode"] });
      if (loaded) load = saturateCores(2, 600_000);
    }, 60_000);
    afterAll(async () => {
      await load?.stop();
      await world?.stop();
    });

    const send = async (text: string) =>
      (await world.api<Json>("POST", `/v1/sessions/${id}/send`, { text })).body;
    const session = async () => (await world.api<Json>("GET", `/v1/sessions/${id}`)).body;

    test("create with a prompt: delivered once, answered, idle, tokens counted", async () => {
      const created = await world.api<Json>("POST", "/v1/sessions", {
        agent: "opencode",
        workDir: world.workDir,
        prompt: "say hello",
      });
      expect(created.status).toBe(201);
      expect(created.body).toMatchObject({
        agent: "opencode",
        promptDelivery: { delivered: true, attempts: 1 },
      });
      id = created.body.id;
      await world.waitFor(id, "idle", TURN_MS);
      expect(world.prompts()).toEqual(["say hello"]);
      const read = await world.api<Json>("GET", `/v1/sessions/${id}/read`);
      expect(read.body.output).toContain("Hello from the mock model!");
      expect(read.body.tokenUsage.input).toBeGreaterThan(0);
      expect(read.body.tokenUsage.output).toBeGreaterThan(0);
      expect((await session()).tokenUsage.input).toBeGreaterThan(0);
    }, 90_000);

    test("a 30-line prompt arrives whole, as one message", async () => {
      const text = Array.from({ length: 30 }, (_, i) => `line ${i + 1}: ${"·".repeat(i)}`).join("\n");
      const before = world.prompts().length;
      expect(await send(text)).toEqual({ delivered: true, attempts: 1 });
      await world.waitFor(id, "idle", TURN_MS);
      expect(world.prompts().slice(before)).toEqual([text]);
    }, 90_000);

    test("a command's permission, approved: the command runs", async () => {
      expect(await send("run cmd: touch approved.txt")).toEqual({ delivered: true, attempts: 1 });
      const waiting = await world.waitFor(id, "permission_prompt", TURN_MS);
      expect(waiting.pendingPermission).toMatchObject({
        kind: "tool",
        tool: "bash",
        detail: "touch approved.txt",
      });
      const approved = await world.api("POST", `/v1/sessions/${id}/approve`, {
        permissionId: (waiting.pendingPermission as Json).id,
      });
      expect(approved.status).toBe(200);
      await world.waitFor(id, "idle", TURN_MS);
      expect(existsSync(join(world.workDir, "approved.txt"))).toBe(true);
    }, 90_000);

    test("a file's permission, rejected: the file is not written", async () => {
      expect(await send("edit file")).toEqual({ delivered: true, attempts: 1 });
      const waiting = await world.waitFor(id, "permission_prompt", TURN_MS);
      expect(waiting.pendingPermission).toMatchObject({
        kind: "tool",
        detail: expect.stringContaining("hello.txt"),
      });
      expect((await world.api("POST", `/v1/sessions/${id}/reject`)).status).toBe(200);
      await world.waitFor(id, "idle", TURN_MS);
      expect(existsSync(join(world.workDir, "hello.txt"))).toBe(false);
    }, 90_000);

    test("a question, answered by its option: the agent gets that answer", async () => {
      expect(await send("ask me")).toEqual({ delivered: true, attempts: 1 });
      const asking = await world.waitFor(id, "asking", TURN_MS);
      expect(asking.pendingPermission).toMatchObject({
        kind: "question",
        question: "Which color should the button be?",
        options: [
          { index: 1, label: "Red" },
          { index: 2, label: "Blue" },
        ],
      });
      const answered = await world.api("POST", `/v1/sessions/${id}/answer`, { option: 2 });
      expect(answered.status).toBe(200);
      await world.waitFor(id, "idle", TURN_MS);
      const results = await world.api<Json>("GET", `/v1/sessions/${id}/transcript/cursor?limit=200`);
      const texts = (results.body.messages as Json[])
        .filter((m) => m.kind === "tool_result")
        .map((m) => m.text);
      expect(texts.some((t: string) => t.includes('="Blue"'))).toBe(true);
    }, 90_000);

    test("interrupt mid-turn: the turn stops, the session is idle", async () => {
      await send("slow 30");
      await world.waitFor(id, "working", TURN_MS);
      await Bun.sleep(1500);
      expect((await world.api("POST", `/v1/sessions/${id}/interrupt`)).status).toBe(200);
      await world.waitFor(id, "idle", 15_000);
      const last = world.mock.requests().at(-1)!;
      expect([last.prompt, last.status]).toEqual(["slow 30", "aborted"]);
    }, 90_000);

    if (loaded) return;

    test("a readonly profile: the plugin refuses the command before it runs, no dialog", async () => {
      await world.api("PUT", `/v1/sessions/${id}/permission-profile`, { profile: "readonly" });
      expect(await send("run cmd: touch denied.txt")).toEqual({ delivered: true, attempts: 1 });
      const seen = new Set<string>();
      for (const deadline = Date.now() + 30_000; ; ) {
        const status = (await session()).status as string;
        seen.add(status);
        if (status === "idle" && seen.has("working")) break;
        if (Date.now() > deadline) throw new Error(`never idle again: ${[...seen]}`);
        await Bun.sleep(50);
      }
      expect(seen.has("permission_prompt")).toBe(false);
      expect(existsSync(join(world.workDir, "denied.txt"))).toBe(false);
      await world.api("PUT", `/v1/sessions/${id}/permission-profile`, { profile: "full" });
    }, 60_000);

    test("the transcript pages backwards by cursor, without gaps or overlaps", async () => {
      const newest = await world.api<Json>("GET", `/v1/sessions/${id}/transcript/cursor?limit=3`);
      expect(newest.body.messages).toHaveLength(3);
      const older = await world.api<Json>(
        "GET",
        `/v1/sessions/${id}/transcript/cursor?limit=3&before_id=${newest.body.oldest_id}`,
      );
      expect(older.body.newest_id).toBe(newest.body.oldest_id - 1);
      const users = await world.api<Json>("GET", `/v1/sessions/${id}/transcript/cursor?role=user&limit=200`);
      const prompts = (users.body.messages as Json[]).filter((m) => m.kind === "prompt").map((m) => m.text);
      expect(prompts.slice(0, 1)).toEqual(["say hello"]);
      expect(prompts).toContain("run cmd: touch approved.txt");
    });

    test("kill ends it; resume brings the same OpenCode conversation back", async () => {
      const killed = await world.api<Json>("DELETE", `/v1/sessions/${id}`);
      expect(killed.body.status).toBe("killed");
      const resumed = await world.api<Json>("POST", `/v1/sessions/${id}/resume`);
      expect(resumed.status).toBe(200);
      await world.waitFor(id, "idle", TURN_MS);
      expect(await send("say hello again")).toEqual({ delivered: true, attempts: 1 });
      await world.waitFor(id, "idle", TURN_MS);
      const last = world.mock
        .requests()
        .filter((r) => r.kind === "main")
        .at(-1)!;
      expect(last.history?.[0]).toBe("say hello");
      expect(last.prompt).toBe("say hello again");
    }, 120_000);

    test("fork: a new session continues a copy of the conversation", async () => {
      await world.api("DELETE", `/v1/sessions/${id}`);
      const forked = await world.api<Json>("POST", `/v1/sessions/${id}/fork`);
      expect(forked.status).toBe(201);
      const fork = forked.body.id as string;
      expect(fork).not.toBe(id);
      await world.waitFor(fork, "idle", TURN_MS);
      const sent = await world.api<Json>("POST", `/v1/sessions/${fork}/send`, {
        text: "say hello from the fork",
      });
      expect(sent.body).toEqual({ delivered: true, attempts: 1 });
      await world.waitFor(fork, "idle", TURN_MS);
      const last = world.mock
        .requests()
        .filter((r) => r.kind === "main")
        .at(-1)!;
      expect(last.history).toContain("say hello again");
      expect(last.prompt).toBe("say hello from the fork");
      const read = await world.api<Json>("GET", `/v1/sessions/${fork}/read`);
      expect(read.body.output).toContain("Hello from the mock model!");
      // Its conversation begins with the parent's (as history), then goes its own way.
      const users = await world.api<Json>(
        "GET",
        `/v1/sessions/${fork}/transcript/cursor?role=user&limit=200`,
      );
      const prompts = (users.body.messages as Json[]).filter((m) => m.kind === "prompt").map((m) => m.text);
      expect(prompts[0]).toBe("say hello");
      expect(prompts.slice(-2)).toEqual(["say hello again", "say hello from the fork"]);
      expect((await world.api<Json>("DELETE", `/v1/sessions/${fork}`)).body.status).toBe("killed");
    }, 120_000);

    /** A new session in `permissionMode` with `prompt`, watched until idle: the statuses it went through. */
    async function runInMode(permissionMode: string, prompt: string): Promise<Set<string>> {
      const created = await world.api<Json>("POST", "/v1/sessions", {
        agent: "opencode",
        workDir: world.workDir,
        permissionMode,
        prompt,
        reuse: false,
      });
      expect(created.body.promptDelivery).toEqual({ delivered: true, attempts: 1 });
      const seen = new Set<string>();
      for (const deadline = Date.now() + TURN_MS; ; ) {
        const status = (await world.api<Json>("GET", `/v1/sessions/${created.body.id}`)).body
          .status as string;
        seen.add(status);
        if (status === "idle" && seen.has("working")) break;
        if (Date.now() > deadline) throw new Error(`never idle: ${[...seen]}`);
        await Bun.sleep(50);
      }
      await world.api("DELETE", `/v1/sessions/${created.body.id}`);
      return seen;
    }

    test("bypassPermissions: a command runs without asking", async () => {
      const seen = await runInMode("bypassPermissions", "run cmd: touch bypassed.txt");
      expect(seen.has("permission_prompt")).toBe(false);
      expect(existsSync(join(world.workDir, "bypassed.txt"))).toBe(true);
    }, 90_000);

    test("plan: its read-only agent writes nothing, without asking", async () => {
      const seen = await runInMode("plan", "edit file");
      expect(seen.has("permission_prompt")).toBe(false);
      expect(existsSync(join(world.workDir, "hello.txt"))).toBe(false);
    }, 90_000);

    test("a mode OpenCode has no equivalent of is refused before anything starts", async () => {
      const refused = await world.api<Json>("POST", "/v1/sessions", {
        agent: "opencode",
        workDir: world.workDir,
        permissionMode: "dontAsk",
      });
      expect(refused.status).toBe(400);
    });
  });
}
