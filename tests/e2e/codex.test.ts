import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { type AgentWorld, startAgentWorld } from "../helpers/agent-world.ts";
import { codexVersion } from "../helpers/agents/codex.ts";
import { saturateCores } from "../helpers/load.ts";
import { type SseReader, sseReader } from "../helpers/sse.ts";
import { tmuxAgentScenario } from "../helpers/tmux-scenario.ts";

// biome-ignore lint/suspicious/noExplicitAny: response bodies are inspected field by field
type Json = Record<string, any>;

/**
 * Sessions on the REAL Codex CLI (0.169.0; CODEX_BIN for another, tests/helpers/agents/codex.ts) through the compiled binary, against the mock model's
 * openai-responses face: the scenario every tmux agent runs (tests/helpers/tmux-scenario.ts:
 * launch, exact delivery, approvals of a command and of an edit, refusal, interrupt, the
 * transcript cursor, tokens, a readonly profile), then Codex's own (a shell command, an API
 * error, kill). Twice: on an idle machine, and with both cores saturated by busy loops, each on a
 * world of its own. One world and one session at a time.
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

tmuxAgentScenario({
  agent: "codex",
  name: "Codex",
  start: () => startAgentWorld({}, { agents: ["codex"] }),
  loads: ["idle", { world: saturateCores }],
  created(t, body) {
    expect(body).toMatchObject({
      agentVersion: codexVersion(),
      verified: true,
      permissionMode: "default",
    });
    expect(
      t
        .world()
        .mock.requests()
        .every((r) => r.face === "openai-responses" || r.kind === undefined),
    ).toBe(true);
  },
  longPrompts: [
    Array.from({ length: 30 }, (_, i) => `line ${i + 1}: ${"·".repeat(i)} end`).join("\n"),
    Array.from({ length: 400 }, (_, i) => `chunk ${i} ${"x".repeat(40)}`)
      .join(" ")
      .slice(0, 20_000),
  ],
  commandTool: "Bash",
  edit: "approve",
  editPermission(t, pending) {
    // The read-only sandbox asks before apply_patch writes.
    expect(pending).toMatchObject({ tool: "apply_patch", detail: join(t.world().workDir, "hello.txt") });
  },
  async interrupted(t) {
    // It stays idle: the streamed text that stopped is no working screen.
    await Bun.sleep(3000);
    expect((await t.world().api<Json>("GET", `/v1/sessions/${t.id()}`)).body.status).toBe("idle");
  },
  transcript(_t, messages) {
    const calls = messages.filter((m) => m.kind === "tool_use").map((m) => m.toolName);
    expect(calls).toEqual(["exec_command", "exec_command", "apply_patch"]);
  },
  tokens(usage) {
    expect(usage.cacheRead).toBeGreaterThan(0);
  },
  async refused(t) {
    const read = await t.world().api<Json>("GET", `/v1/sessions/${t.id()}/read`);
    expect(read.body.output).toContain("blocked by PreToolUse hook");
  },
  more(t) {
    const world = () => t.world();
    let events: SseReader;
    const seen: Json[] = [];
    beforeAll(async () => {
      events = sseReader((await fetch(`${world().ag.url}/v1/events`)).body!);
    });
    afterAll(async () => {
      await events?.cancel().catch(() => {});
    });

    /** How many times `event` was published for the session so far. */
    async function count(event: string): Promise<number> {
      for (const message of await events.available()) if (message.data) seen.push(message.data);
      return seen.filter((e) => e.event === event && e.session?.id === t.id()).length;
    }

    test("a shell command (no hook, no prompt line) is delivered and runs once", async () => {
      expect(await t.send("!echo bang >> bang.txt")).toEqual({ delivered: true, attempts: 1 });
      await t.reach("idle", 30_000);
      const deadline = Date.now() + 5000;
      while (!existsSync(join(world().workDir, "bang.txt")) && Date.now() < deadline) await Bun.sleep(100);
      expect(readFileSync(join(world().workDir, "bang.txt"), "utf8")).toBe("bang\n");
    }, 60_000);

    test("an API error (429) ends the turn at once (no Stop hook comes): idle, told once", async () => {
      const before = await count("status.rate_limited");
      expect(await t.send("rate limit")).toEqual({ delivered: true, attempts: 1 });
      await t.reach("idle", 30_000);
      // The next prompt redraws the screen under the old error: it is not told again.
      expect(await t.send("say hello")).toEqual({ delivered: true, attempts: 1 });
      await t.reach("idle", 30_000);
      await Bun.sleep(500);
      expect((await count("status.rate_limited")) - before).toBe(1);
    }, 90_000);

    test("kill ends Codex and every process of the session; no app-server was ever started", async () => {
      const id = t.id();
      expect(processesOf(id).length).toBeGreaterThan(0);
      const codexes = codexesOf(world().env.HOME!);
      expect(codexes.length).toBeGreaterThan(0);
      expect(codexes.filter((argv) => argv.includes("app-server"))).toEqual([]);
      const killed = await world().api<Json>("DELETE", `/v1/sessions/${id}`);
      expect(killed.body.status).toBe("killed");
      const deadline = Date.now() + 10_000;
      while (processesOf(id).length && Date.now() < deadline) await Bun.sleep(200);
      expect(processesOf(id)).toEqual([]);
      expect(codexesOf(world().env.HOME!)).toEqual([]);
    }, 30_000);
  },
});
