import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { compareVersions } from "../../src/agents/versions.ts";
import { acpAgentScenario } from "../helpers/acp-scenario.ts";
import { claudeVersion } from "../helpers/agent-home.ts";
import { type AgentWorld, startAgentWorld } from "../helpers/agent-world.ts";
import { isAlive } from "../helpers/stream.ts";

// biome-ignore lint/suspicious/noExplicitAny: response bodies are inspected field by field
type Json = Record<string, any>;

/**
 * A headless session (driver acp) on the REAL Claude Code through Zed's ACP adapter
 * (`claude-code-acp` 0.16.2, found in ag's node_modules) and the compiled binary, against the mock
 * model's Anthropic face. The adapter runs the world's `claude` (2.1.197), not the cli.js its SDK
 * bundles. The tests run in order on one session: the scenario every ACP agent runs
 * (tests/helpers/acp-scenario.ts), then Claude Code's own.
 */
let world: AgentWorld;

beforeAll(async () => {
  world = await startAgentWorld();
}, 60_000);
afterAll(async () => {
  await world?.stop();
});

/** The ACP session id ag keeps for a session (Claude Code runs with it as its --session-id). */
const acpSessionOf = (session: string) =>
  JSON.parse(readFileSync(join(world.env.SVC_STATE_DIR!, "sessions", session, "acp.json"), "utf8"))
    .sessionId as string;

/** Live processes whose command line names `text`. */
function processesNaming(text: string): number[] {
  return readdirSync("/proc")
    .filter((entry) => /^\d+$/.test(entry))
    .filter((pid) => {
      try {
        return readFileSync(`/proc/${pid}/cmdline`, "utf8").includes(text);
      } catch {
        return false; // gone meanwhile
      }
    })
    .map(Number);
}

/** Polls `check` every 200 ms until it holds; throws after `ms`. */
async function eventually(check: () => boolean | Promise<boolean>, ms: number): Promise<void> {
  for (const deadline = Date.now() + ms; !(await check()); await Bun.sleep(200))
    if (Date.now() > deadline) throw new Error("condition not met in time");
}

const parentOf = (pid: number) =>
  Number(readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ")[1]);

describe("a Claude Code session over ACP", () => {
  const { id, send, reach, messages, turns } = acpAgentScenario({
    agent: "claude",
    face: "anthropic",
    world: () => world,
    created(idle) {
      // Our Claude Code (each version asks for its own default model), not the SDK's bundled 2.1.44.
      const ownModel =
        compareVersions(claudeVersion(), "2.1.328") >= 0 ? "claude-opus-5-5" : "claude-opus-4-8";
      expect(turns()[0]?.model).toBe(ownModel);
      // The adapter reports no tokens: they are read from Claude Code's own transcript.
      expect(idle.tokenUsage.input + idle.tokenUsage.cacheRead).toBeGreaterThan(0);
      expect(idle.tokenUsage.output).toBeGreaterThan(0);
    },
    permission(pending, command) {
      expect(pending.options.map((o: Json) => o.description)).toEqual([
        "allow_always",
        "allow_once",
        "reject_once",
      ]);
      expect(pending.toolInput.rawInput.command).toBe(command);
    },
    async approved() {
      expect((await lastTurnEnd())?.text).toBe("end_turn");
    },
    async rejected() {
      // 2.1.197 answers the refused tool's turn with an error the adapter passes on: ag reads it
      // as the interrupted turn Claude Code records, not as a failure.
      expect((await lastTurnEnd())?.text).toBe("cancelled");
    },
    async interrupted(prompt) {
      // Ended as interrupted, the model's stream cut.
      expect((await lastTurnEnd())?.text).toBe("cancelled");
      await eventually(() => turns().at(-1)?.status === "aborted", 5_000);
      expect(turns().at(-1)).toMatchObject({ prompt, status: "aborted" });
    },
    edit(pending) {
      expect(pending.tool).toBe("edit");
    },
    transcript(all) {
      // The adapter announces a call before its input streams, then again with it: one entry, with the input.
      const edits = all.filter((m) => m.kind === "tool_use" && m.toolName === "edit");
      expect(edits.map((m) => m.toolInput.file_path)).toEqual([join(world.workDir, "hello.txt")]);
    },
  });
  const lastTurnEnd = async () => (await messages()).filter((m) => m.subtype === "turn_end").at(-1);

  test("permission mode acceptEdits (session/set_mode): a file write goes through without a prompt", async () => {
    const dir = join(world.workDir, "accept-edits");
    mkdirSync(dir, { recursive: true });
    const created = await world.api<Json>("POST", "/v1/sessions", {
      agent: "claude",
      driver: "acp",
      workDir: dir,
      permissionMode: "acceptEdits",
      prompt: "edit file",
      reuse: false,
    });
    expect(created.status).toBe(201);
    // A permission prompt would hold the turn: idle with the file written means none was asked.
    await world.waitFor(created.body.id, "idle", 60_000);
    expect(readFileSync(join(dir, "hello.txt"), "utf8")).toBe("hello from the mock\n");
    expect((await world.api<Json>("DELETE", `/v1/sessions/${created.body.id}`)).status).toBe(200);
  }, 90_000);

  test("a model asked for (session/set_model after session/new): the model API hears it", async () => {
    const dir = join(world.workDir, "with-model");
    mkdirSync(dir, { recursive: true });
    const model = "claude-sonnet-4-5-20250929";
    const created = await world.api<Json>("POST", "/v1/sessions", {
      agent: "claude",
      driver: "acp",
      workDir: dir,
      model,
      prompt: "say hello over acp with a model",
      reuse: false,
    });
    expect([created.status, created.body.model]).toEqual([201, model]);
    await world.waitFor(created.body.id, "idle", 60_000);
    const asked = turns().filter((r) => r.prompt?.includes("say hello over acp with a model"));
    expect(asked.length).toBeGreaterThan(0);
    expect(new Set(asked.map((r) => r.model))).toEqual(new Set([model]));
    expect((await world.api<Json>("DELETE", `/v1/sessions/${created.body.id}`)).status).toBe(200);
  }, 90_000);

  test("kill while a permission waits ends the session, the adapter and its Claude Code", async () => {
    const created = await world.api<Json>("POST", "/v1/sessions", {
      agent: "claude",
      driver: "acp",
      workDir: world.workDir,
      prompt: "run cmd: touch never.txt",
      reuse: false,
    });
    expect(created.status).toBe(201);
    await world.waitFor(created.body.id, "permission_prompt", 60_000);
    const [claude] = processesNaming(acpSessionOf(created.body.id));
    expect(claude).toBeDefined();
    const adapter = parentOf(claude!);
    expect(readFileSync(`/proc/${adapter}/cmdline`, "utf8")).toContain("claude-code-acp");
    const killed = await world.api<Json>("DELETE", `/v1/sessions/${created.body.id}`);
    expect(killed.status).toBe(200);
    expect(killed.body.status).toBe("killed");
    // The adapter's process group goes with it: Claude Code too.
    await eventually(
      () => !isAlive(adapter) && processesNaming(acpSessionOf(created.body.id)).length === 0,
      5_000,
    );
    expect(existsSync(join(world.workDir, "never.txt"))).toBe(false);
  }, 60_000);

  /**
   * claude-code-acp advertises loadSession and its session/load works across processes: it finds
   * Claude Code's transcript of the conversation on disk (~/.claude/projects) and resumes it. So
   * after a restart the session comes back idle, and the model gets the earlier conversation.
   */
  test("ag restarted while the session is idle: reopened by session/load, the model still has the conversation", async () => {
    const before = await messages();
    const tokensBefore = (await world.api<Json>("GET", `/v1/sessions/${id()}`)).body.tokenUsage;
    await world.restart();
    await eventually(async () => (await messages()).some((m) => m.subtype === "reopened"), 60_000);
    const after = await messages();
    // What the adapter replayed is not written again: the same entries, then ag's note.
    expect(after.slice(0, before.length)).toEqual(before);
    expect(after.slice(before.length)).toMatchObject([{ role: "system", subtype: "reopened" }]);
    const reopened = await reach("idle");
    expect(reopened.tokenUsage).toEqual(tokensBefore);

    expect(await send("what did I ask first?")).toEqual({ delivered: true, attempts: 1 });
    await reach("idle");
    const request = turns().at(-1)!;
    expect(request.prompt).toBe("what did I ask first?");
    expect(request.history?.[0]).toBe("say hello");
    expect(request.history).toContain("edit file");
    const read = await world.api<Json>("GET", `/v1/sessions/${id()}/read`);
    expect(read.body.output).toContain("Mock reply to: what did I ask first?");
  }, 120_000);

  test("ag restarted while a permission waits: the old Claude Code goes with the old ag; reopened idle, the lost turn interrupted", async () => {
    expect(await send("run cmd: touch during-restart.txt")).toEqual({ delivered: true, attempts: 1 });
    await reach("permission_prompt");
    const [claude] = processesNaming(acpSessionOf(id()));
    expect(claude).toBeDefined();
    const reopenedBefore = (await messages()).filter((m) => m.subtype === "reopened").length;
    await world.restart();
    // The old ag ended the adapter's process group as it stopped: Claude Code too.
    await eventually(() => !isAlive(claude!), 5_000);
    await eventually(
      async () => (await messages()).filter((m) => m.subtype === "reopened").length > reopenedBefore,
      60_000,
    );
    await reach("idle");
    expect((await lastTurnEnd())?.text).toBe("cancelled");
    expect(existsSync(join(world.workDir, "during-restart.txt"))).toBe(false);
  }, 120_000);
});
