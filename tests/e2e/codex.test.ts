import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { type AgentWorld, startAgentWorld } from "../helpers/agent-world.ts";
import { codexVersion } from "../helpers/agents/codex.ts";
import { saturateCores } from "../helpers/load.ts";
import { type SseReader, sseReader } from "../helpers/sse.ts";

// biome-ignore lint/suspicious/noExplicitAny: response bodies are inspected field by field
type Json = Record<string, any>;

/**
 * Sessions on the REAL Codex CLI (0.169.0; CODEX_BIN for another, tests/helpers/agents/codex.ts) through the compiled binary, against the mock model's
 * openai-responses face: launch, exact delivery, approvals of a command and of an edit, refusal,
 * interrupt, the transcript cursor, tokens, kill. Twice: on an idle machine, and with both cores
 * saturated by busy loops. One world and one session at a time.
 */

/** The processes whose command line names this session (Codex, its launcher, its hooks). */
function processesOf(sessionId: string): number[] {
  return readdirSync("/proc")
    .filter((entry) => /^\d+$/.test(entry))
    .filter((pid) => {
      try {
        return readFileSync(`/proc/${pid}/cmdline`, "utf8").includes(sessionId);
      } catch {
        return false; // gone meanwhile
      }
    })
    .map(Number);
}

/**
 * The Codex processes of the world (their HOME is its home), with their command lines: a
 * background app-server Codex might start would not name the session, but it would be here.
 */
function codexesOf(home: string): string[] {
  return readdirSync("/proc")
    .filter((entry) => /^\d+$/.test(entry))
    .flatMap((pid) => {
      try {
        const environ = readFileSync(`/proc/${pid}/environ`, "utf8").split("\0");
        const argv = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").join(" ");
        return environ.includes(`HOME=${home}`) && /\bcodex\b/.test(argv) ? [argv] : [];
      } catch {
        return []; // gone meanwhile
      }
    });
}

describe("GET /v1/agents", () => {
  let world: AgentWorld;
  beforeAll(async () => {
    world = await startAgentWorld({}, { agents: ["codex"] });
  }, 60_000);
  afterAll(async () => {
    await world?.stop();
  });

  test("lists Codex, installed, with its version, capabilities and permission modes", async () => {
    const agents = await world.api<Json[]>("GET", "/v1/agents");
    expect(agents.body.find((a) => a.id === "codex")).toMatchObject({
      name: "Codex CLI",
      installed: true,
      version: codexVersion(),
      verified: true,
      drivers: ["tmux"],
      capabilities: ["hooks", "transcript", "resume", "fork", "policy"],
      command: "codex",
      package: "@openai/codex",
      default: false,
    });
  });
});

for (const loaded of [false, true]) {
  describe(loaded ? "Codex with both cores saturated" : "Codex on an idle machine", () => {
    let world: AgentWorld;
    let load: { stop(): Promise<void> } | null = null;
    let events: SseReader;
    const seen: Json[] = [];
    let id: string;

    beforeAll(async () => {
      world = await startAgentWorld({}, { agents: ["codex"] });
      if (loaded) load = saturateCores(2, 600_000);
      events = sseReader((await fetch(`${world.ag.url}/v1/events`)).body!);
    }, 60_000);
    afterAll(async () => {
      await load?.stop();
      await events?.cancel().catch(() => {});
      await world?.stop();
    });

    /** How many times `event` was published for the session so far. */
    async function count(event: string): Promise<number> {
      for (const message of await events.available()) if (message.data) seen.push(message.data);
      return seen.filter((e) => e.event === event && e.session?.id === id).length;
    }

    const send = async (text: string) =>
      (await world.api<Json>("POST", `/v1/sessions/${id}/send`, { text })).body;

    test("create {agent: codex} with a prompt → delivered once → idle → /read has the reply", async () => {
      const created = await world.api<Json>("POST", "/v1/sessions", {
        workDir: world.workDir,
        agent: "codex",
        prompt: "say hello",
      });
      expect(created.status).toBe(201);
      expect(created.body).toMatchObject({
        agent: "codex",
        agentVersion: codexVersion(),
        verified: true,
        permissionMode: "default",
        promptDelivery: { delivered: true, attempts: 1 },
      });
      id = created.body.id;
      await world.waitFor(id, "idle", 60_000);
      expect(world.prompts()).toEqual(["say hello"]);
      expect(world.mock.requests().every((r) => r.face === "openai-responses" || r.kind === undefined)).toBe(
        true,
      );
      const read = await world.api<Json>("GET", `/v1/sessions/${id}/read`);
      expect(read.body.output).toContain("Hello from the mock model!");
    }, 90_000);

    test("a 30-line prompt and a 20 KB prompt each arrive whole, as one message", async () => {
      const lines = Array.from({ length: 30 }, (_, i) => `line ${i + 1}: ${"·".repeat(i)} end`).join("\n");
      const big = Array.from({ length: 400 }, (_, i) => `chunk ${i} ${"x".repeat(40)}`)
        .join(" ")
        .slice(0, 20_000);
      for (const text of [lines, big]) {
        const before = world.prompts().length;
        expect(await send(text)).toEqual({ delivered: true, attempts: 1 });
        await world.waitFor(id, "idle", 60_000);
        expect(world.prompts().slice(before)).toEqual([text]);
      }
    }, 90_000);

    test("a shell command (no hook, no prompt line) is delivered and runs once", async () => {
      expect(await send("!echo bang >> bang.txt")).toEqual({ delivered: true, attempts: 1 });
      await world.waitFor(id, "idle", 30_000);
      const deadline = Date.now() + 5000;
      while (!existsSync(join(world.workDir, "bang.txt")) && Date.now() < deadline) await Bun.sleep(100);
      expect(readFileSync(join(world.workDir, "bang.txt"), "utf8")).toBe("bang\n");
    }, 60_000);

    test("an API error (429) ends the turn at once (no Stop hook comes): idle, told once", async () => {
      const before = await count("status.rate_limited");
      expect(await send("rate limit")).toEqual({ delivered: true, attempts: 1 });
      await world.waitFor(id, "idle", 30_000);
      // The next prompt redraws the screen under the old error: it is not told again.
      expect(await send("say hello")).toEqual({ delivered: true, attempts: 1 });
      await world.waitFor(id, "idle", 30_000);
      await Bun.sleep(500);
      expect((await count("status.rate_limited")) - before).toBe(1);
    }, 90_000);

    test("a command's approval dialog: approved, the command runs", async () => {
      expect(await send("run cmd: touch approved.txt")).toEqual({ delivered: true, attempts: 1 });
      const waiting = await world.waitFor(id, "permission_prompt", 60_000);
      expect(waiting.pendingPermission).toMatchObject({
        kind: "tool",
        tool: "Bash",
        detail: "touch approved.txt",
      });
      const approved = await world.api("POST", `/v1/sessions/${id}/approve`, {
        permissionId: (waiting.pendingPermission as Json).id,
      });
      expect(approved.status).toBe(200);
      await world.waitFor(id, "idle", 60_000);
      expect(existsSync(join(world.workDir, "approved.txt"))).toBe(true);
    }, 90_000);

    test("a command's approval dialog: rejected, the command does not run", async () => {
      await send("run cmd: touch rejected.txt");
      await world.waitFor(id, "permission_prompt", 60_000);
      expect((await world.api("POST", `/v1/sessions/${id}/reject`)).status).toBe(200);
      await world.waitFor(id, "idle", 60_000);
      expect(existsSync(join(world.workDir, "rejected.txt"))).toBe(false);
      expect((await world.api<Json>("POST", `/v1/sessions/${id}/approve`)).body.code).toBe(
        "NO_PENDING_PERMISSION",
      );
    }, 90_000);

    test("an edit's approval dialog (read-only sandbox): approved, the file is written", async () => {
      await send("edit file");
      const waiting = await world.waitFor(id, "permission_prompt", 60_000);
      expect(waiting.pendingPermission).toMatchObject({
        kind: "tool",
        tool: "apply_patch",
        detail: join(world.workDir, "hello.txt"),
      });
      await world.api("POST", `/v1/sessions/${id}/approve`, {
        permissionId: (waiting.pendingPermission as Json).id,
      });
      await world.waitFor(id, "idle", 60_000);
      expect(readFileSync(join(world.workDir, "hello.txt"), "utf8")).toBe("hello from the mock\n");
    }, 90_000);

    test("interrupt mid-turn: the turn stops, the session is idle again", async () => {
      await send("slow 30");
      await world.waitFor(id, "working", 30_000);
      await Bun.sleep(1500);
      expect((await world.api("POST", `/v1/sessions/${id}/interrupt`)).status).toBe(200);
      await world.waitFor(id, "idle", 15_000);
      // It stays idle: the streamed text that stopped is no working screen.
      await Bun.sleep(3000);
      expect((await world.api<Json>("GET", `/v1/sessions/${id}`)).body.status).toBe("idle");
      const aborted = world.mock.requests().findLast((r) => r.prompt === "slow 30");
      expect(aborted?.status).toBe("aborted");
    }, 90_000);

    test("the transcript cursor pages backwards without gaps or overlaps", async () => {
      const newest = await world.api<Json>("GET", `/v1/sessions/${id}/transcript/cursor?limit=3`);
      expect(newest.status).toBe(200);
      expect(newest.body.messages).toHaveLength(3);
      const older = await world.api<Json>(
        "GET",
        `/v1/sessions/${id}/transcript/cursor?limit=3&before_id=${newest.body.oldest_id}`,
      );
      expect(older.body.newest_id).toBe(newest.body.oldest_id - 1);
      const all = await world.api<Json>("GET", `/v1/sessions/${id}/transcript/cursor?limit=200`);
      const ids = (all.body.messages as Json[]).map((m) => m.id);
      expect(ids).toEqual(Array.from({ length: ids.length }, (_, i) => ids[0] + i));
      const prompts = (all.body.messages as Json[]).filter((m) => m.kind === "prompt").map((m) => m.text);
      expect(prompts[0]).toBe("say hello");
      expect(prompts).toContain("edit file");
      const calls = (all.body.messages as Json[]).filter((m) => m.kind === "tool_use").map((m) => m.toolName);
      expect(calls).toEqual(["exec_command", "exec_command", "apply_patch"]);
    });

    test("tokens are counted (cached input apart) and priced", async () => {
      const session = (await world.api<Json>("GET", `/v1/sessions/${id}`)).body;
      expect(session.tokenUsage.input).toBeGreaterThan(0);
      expect(session.tokenUsage.output).toBeGreaterThan(0);
      expect(session.tokenUsage.cacheRead).toBeGreaterThan(0);
      const metrics = await world.api<Json>("GET", `/v1/sessions/${id}/metrics`);
      expect(metrics.body.estimatedCost.usd).toBeGreaterThan(0);
    });

    test("a readonly policy refuses a command in the pre-tool hook: no dialog, nothing runs", async () => {
      await world.api("PUT", `/v1/sessions/${id}/permission-profile`, { profile: "readonly" });
      expect(await send("run cmd: touch denied.txt")).toEqual({ delivered: true, attempts: 1 });
      const seen = new Set<string>();
      const deadline = Date.now() + 30_000;
      for (;;) {
        const status = (await world.api<Json>("GET", `/v1/sessions/${id}`)).body.status as string;
        seen.add(status);
        if (status === "idle" && seen.has("working")) break;
        if (Date.now() > deadline) throw new Error(`never idle again: ${[...seen]}`);
        await Bun.sleep(50);
      }
      expect(seen.has("permission_prompt")).toBe(false);
      expect(existsSync(join(world.workDir, "denied.txt"))).toBe(false);
      const read = await world.api<Json>("GET", `/v1/sessions/${id}/read`);
      expect(read.body.output).toContain("blocked by PreToolUse hook");
      await world.api("PUT", `/v1/sessions/${id}/permission-profile`, { profile: "full" });
    }, 60_000);

    test("kill ends Codex and every process of the session; no app-server was ever started", async () => {
      expect(processesOf(id).length).toBeGreaterThan(0);
      const codexes = codexesOf(world.env.HOME!);
      expect(codexes.length).toBeGreaterThan(0);
      expect(codexes.filter((argv) => argv.includes("app-server"))).toEqual([]);
      const killed = await world.api<Json>("DELETE", `/v1/sessions/${id}`);
      expect(killed.body.status).toBe("killed");
      const deadline = Date.now() + 10_000;
      while (processesOf(id).length && Date.now() < deadline) await Bun.sleep(200);
      expect(processesOf(id)).toEqual([]);
      expect(codexesOf(world.env.HOME!)).toEqual([]);
    }, 30_000);
  });
}
