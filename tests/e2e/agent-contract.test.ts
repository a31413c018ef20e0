import { afterAll, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { agentAdapters } from "../../src/agents/index.ts";
import { compareVersions } from "../../src/agents/versions.ts";
import { type AgentVersion, agentVersions } from "../helpers/agent-versions.ts";
import { type AgentWorld, startAgentWorld } from "../helpers/agent-world.ts";
import { unframedPrompt } from "../helpers/paste-frame.ts";
import { isAlive } from "../helpers/stream.ts";

// biome-ignore lint/suspicious/noExplicitAny: response bodies are inspected field by field
type Json = Record<string, any>;

/**
 * The e2e contract of ag with one agent CLI version: one scenario, run for every (agent, version)
 * under test (tests/helpers/agent-versions.ts: the pins; the newest too with
 * AG_AGENT_MATRIX=newest, as scripts/agent-matrix.ts runs it). A world of its own per version,
 * one session at a time, the tests of a version in order on that session. Each agent's own e2e
 * file goes further; this is what must hold on every version ag claims to drive.
 */

/** What differs between agents in this scenario, and nothing else. */
interface AgentTraits {
  /** The tool name of a shell command's permission. */
  shellTool: string;
  /** Whether the version may hand the model a big paste in a frame of its own (unframedPrompt). */
  framesPastes?: (version: string) => boolean;
}

const TRAITS: Record<string, AgentTraits> = {
  claude: { shellTool: "Bash", framesPastes: (v) => compareVersions(v, "2.1.328") >= 0 },
  codex: { shellTool: "Bash" },
  gemini: { shellTool: "run_shell_command" },
  opencode: { shellTool: "bash" },
};

const TURN_MS = 60_000;
const THIRTY_LINES = Array.from({ length: 30 }, (_, i) => `line ${i + 1}: ${"·".repeat(i)} end`).join("\n");
const TWENTY_KB = Array.from({ length: 400 }, (_, i) => `chunk ${i} ${"x".repeat(40)}`)
  .join(" ")
  .slice(0, 20_000);

for (const version of agentVersions()) contract(version);

/** A prompt the model was given other than the one sent, short enough to read in a diff. */
function sketch(prompt: string): string {
  return `${prompt.length} chars: ${JSON.stringify(prompt.slice(0, 80))} … ${JSON.stringify(prompt.slice(-60))}`;
}

function contract(under: AgentVersion): void {
  const traits = TRAITS[under.agent];
  const adapter = agentAdapters()
    .find((a) => a.name === under.agent)
    ?.forVersion(under.version);
  if (!traits || !adapter) throw new Error(`agent-contract: no traits or adapter for ${under.agent}`);
  const asksQuestions = adapter.capabilities.includes("questions");
  const received = (prompt: string) =>
    traits.framesPastes?.(under.version) ? unframedPrompt(prompt) : prompt;

  describe(`${under.agent} ${under.version}`, () => {
    let world: AgentWorld;
    let id = "";

    beforeAll(async () => {
      world = await startAgentWorld({}, { agents: [under.agent], binaries: under.binaries() });
    }, 60_000);
    afterAll(async () => {
      await world?.stop();
    });

    /** The session of this version's tests, made by the first. */
    const session = () => {
      if (!id) throw new Error("no session: the create failed");
      return id;
    };
    const api = <T = Json>(method: string, path: string, body?: unknown) =>
      world.api<T>(method, `/v1/sessions/${session()}${path}`, body);
    /** Sends `text`, which must be delivered at the first attempt; if not, the screen says why. */
    async function deliver(text: string): Promise<void> {
      const sent = (await api("POST", "/send", { text })).body;
      if (sent?.delivered === true && sent.attempts === 1 && Object.keys(sent).length === 2) return;
      const pane = await api("GET", "/pane");
      const what = text.length > 60 ? `${text.slice(0, 60)}…` : text;
      throw new Error(
        `send ${JSON.stringify(what)}: ${JSON.stringify(sent)}\n--- pane ---\n${pane.body?.content ?? ""}`,
      );
    }

    /**
     * Each test starts at an idle session, so that one failure does not fail every test after
     * it: what a failed test left waiting is refused or interrupted, else the session is
     * replaced by a new one.
     */
    beforeEach(async () => {
      if (!id) return;
      const { status } = (await api("GET", "")).body;
      if (status === "idle") return;
      await api("POST", status === "permission_prompt" ? "/reject" : "/interrupt");
      try {
        await world.waitFor(id, "idle", 15_000);
        return;
      } catch {}
      await world.api("DELETE", `/v1/sessions/${id}`);
      const created = await world.api<Json>("POST", "/v1/sessions", {
        agent: under.agent,
        workDir: world.workDir,
        prompt: "say hello",
        reuse: false,
      });
      id = created.body.id;
      await reach("idle");
    }, 90_000);

    /** Waits for a status; on a timeout, the agent's screen says why. */
    async function reach(status: string, timeoutMs = TURN_MS): Promise<Json> {
      try {
        return await world.waitFor(session(), status, timeoutMs);
      } catch (error) {
        const pane = await api("GET", "/pane");
        throw new Error(`${(error as Error).message}\n--- pane ---\n${pane.body?.content ?? ""}`);
      }
    }

    test("GET /v1/agents: installed, this version", async () => {
      const agents = await world.api<Json[]>("GET", "/v1/agents");
      const listed = agents.body.find((a) => a.id === under.agent);
      expect(listed).toMatchObject({ installed: true, version: under.version });
      expect(listed?.capabilities).toEqual([...adapter.capabilities]);
    });

    test("create with a one-line prompt: delivered once, idle, /read has the reply, the model got it once", async () => {
      const created = await world.api<Json>("POST", "/v1/sessions", {
        agent: under.agent,
        workDir: world.workDir,
        prompt: "say hello",
      });
      id = created.body.id ?? "";
      expect(created.status).toBe(201);
      expect(created.body).toMatchObject({
        agent: under.agent,
        promptDelivery: { delivered: true, attempts: 1 },
      });
      await reach("idle");
      expect(world.prompts()).toEqual(["say hello"]);
      const read = await api("GET", "/read");
      expect(read.body.output).toContain("Hello from the mock model!");
    }, 90_000);

    for (const [what, text] of [
      ["a 30-line prompt", THIRTY_LINES],
      ["a 20 KB prompt", TWENTY_KB],
    ] as const) {
      test(`${what} reaches the model whole, as one turn`, async () => {
        const before = world.prompts().length;
        const sent = (await api("POST", "/send", { text })).body;
        await reach("idle");
        // Both facts at once: ag's word on the delivery, and what the model was given.
        const given = world.prompts().slice(before).map(received);
        expect({ sent, given: given.map((p) => (p === text ? "the text, whole" : sketch(p))) }).toEqual({
          sent: { delivered: true, attempts: 1 },
          given: ["the text, whole"],
        });
      }, 90_000);
    }

    test("a command's permission, approved: the command runs", async () => {
      await deliver("run cmd: touch approved.txt");
      const waiting = await reach("permission_prompt");
      expect(waiting.pendingPermission).toMatchObject({
        kind: "tool",
        tool: traits.shellTool,
        detail: "touch approved.txt",
      });
      const approved = await api("POST", "/approve", { permissionId: waiting.pendingPermission.id });
      expect(approved.status).toBe(200);
      await reach("idle");
      expect(existsSync(join(world.workDir, "approved.txt"))).toBe(true);
    }, 90_000);

    test("a command's permission, rejected: the command does not run", async () => {
      await deliver("run cmd: touch rejected.txt");
      const waiting = await reach("permission_prompt");
      const rejected = await api("POST", "/reject", { permissionId: waiting.pendingPermission.id });
      expect(rejected.status).toBe(200);
      await reach("idle");
      expect(existsSync(join(world.workDir, "rejected.txt"))).toBe(false);
      expect((await api("POST", "/approve")).body.code).toBe("NO_PENDING_PERMISSION");
    }, 90_000);

    test.skipIf(!asksQuestions)(
      "a question, answered by its option: the agent gets that answer",
      async () => {
        await deliver("ask me");
        const asking = await reach("asking");
        expect(asking.pendingPermission).toMatchObject({
          kind: "question",
          question: "Which color should the button be?",
          options: [
            { index: 1, label: "Red" },
            { index: 2, label: "Blue" },
          ],
        });
        const answered = await api("POST", "/answer", {
          option: 2,
          permissionId: asking.pendingPermission.id,
        });
        expect(answered.status).toBe(200);
        await reach("idle");
        expect((await api("GET", "/read")).body.output).toContain("Blue");
      },
      90_000,
    );

    test("interrupt of a slow turn: the reply stops, the session is idle", async () => {
      await deliver("slow 30");
      await reach("working");
      await Bun.sleep(1500);
      expect((await api("POST", "/interrupt")).status).toBe(200);
      await reach("idle", 15_000);
      const slow = world.mock.requests().findLast((r) => r.kind === "main" && r.prompt === "slow 30");
      expect(slow?.status).toBe("aborted");
    }, 90_000);

    test("the transcript cursor pages backwards without gaps or overlaps", async () => {
      const newest = await api("GET", "/transcript/cursor?limit=3");
      expect(newest.status).toBe(200);
      expect(newest.body.messages).toHaveLength(3);
      const older = await api("GET", `/transcript/cursor?limit=3&before_id=${newest.body.oldest_id}`);
      expect(older.body.messages).toHaveLength(3);
      expect(older.body.newest_id).toBe(newest.body.oldest_id - 1);
      const users = await api("GET", "/transcript/cursor?role=user&limit=200");
      const prompts = (users.body.messages as Json[]).filter((m) => m.kind === "prompt").map((m) => m.text);
      expect(prompts[0]).toBe("say hello");
    });

    test("tokens are counted: /read's tokenUsage", async () => {
      const read = await api("GET", "/read");
      expect(read.body.tokenUsage.input).toBeGreaterThan(0);
      expect(read.body.tokenUsage.output).toBeGreaterThan(0);
    });

    test("SIGKILL of ag mid-turn, restart: the session is re-adopted, its reply readable, it works", async () => {
      await deliver("slow 3");
      await reach("working");
      await world.restart("SIGKILL");
      expect(world.ag.stderr()).toContain("re-adopted 1 session(s)");
      await reach("idle");
      const output: string = (await api("GET", "/read")).body.output;
      if (!output.includes("streamed slowly")) {
        // Seen once in a loaded run (2.1.328): idle 0.5 s after the restart, the reply cut after
        // its first two chunks. What the model's side and the screen said, to tell why.
        const slow = world.mock.requests().findLast((r) => r.kind === "main" && r.prompt === "slow 3");
        const pane = (await api("GET", "/pane")).body?.content ?? "";
        const events = (await api("GET", "/transcript/cursor?limit=8")).body?.messages ?? [];
        throw new Error(
          `read ${JSON.stringify(output)}; the model's request: ${JSON.stringify(slow?.status)}\n--- pane ---\n${pane}\n--- transcript ---\n${JSON.stringify(events).slice(0, 4000)}\n--- ag ---\n${world.ag.stderr().split("\n").slice(-30).join("\n")}`,
        );
      }
      await deliver("say hello");
      await reach("idle");
    }, 120_000);

    test("kill: the session ends, its agent process too", async () => {
      const { agentPid } = (await api("GET", "/health")).body;
      expect(agentPid).toBeGreaterThan(0);
      const killed = await world.api<Json>("DELETE", `/v1/sessions/${session()}`);
      expect(killed.status).toBe(200);
      expect(killed.body.status).toBe("killed");
      const alive = () => isAlive(agentPid);
      for (const deadline = Date.now() + 10_000; alive() && Date.now() < deadline; ) await Bun.sleep(100);
      expect(alive()).toBe(false);
    }, 30_000);
  });
}
