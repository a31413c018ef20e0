import { expect, test } from "bun:test";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { startAgentWorld } from "../helpers/agent-world.ts";
import { saturateCores } from "../helpers/load.ts";
import { isAlive } from "../helpers/stream.ts";
import { type TmuxScenarioSession, tmuxAgentScenario } from "../helpers/tmux-scenario.ts";

// biome-ignore lint/suspicious/noExplicitAny: response bodies are inspected field by field
type Json = Record<string, any>;

/**
 * A session on the REAL Gemini CLI (@google/gemini-cli 0.61.0) through the compiled binary,
 * against the mock model's Gemini face: one world, one session at a time, the tests in order:
 * the scenario every tmux agent runs (tests/helpers/tmux-scenario.ts), then Gemini's own (resume,
 * fork, permission modes, kill). What depends on timing (dialogs answered and refused, questions,
 * interrupts) runs twice: on an idle machine and with both cores saturated by busy loops.
 */
tmuxAgentScenario({
  agent: "gemini",
  name: "Gemini CLI",
  start: () => startAgentWorld({}, { agents: ["gemini"] }),
  loads: [{ turns: saturateCores }],
  turnMs: 30_000,
  created(t) {
    const world = t.world();
    expect(geminiRequests(t).map((r) => [r.round, r.prompt])).toEqual([[0, "say hello"]]);
    // ag's hooks and settings live in the session's own GEMINI_CLI_HOME: the user's are untouched.
    const settings = JSON.parse(readFileSync(join(world.env.HOME!, ".gemini", "settings.json"), "utf8"));
    expect(settings.hooks).toBeUndefined();
  },
  longPrompts: [Array.from({ length: 30 }, (_, i) => `line ${i + 1}:\t${"·".repeat(i)}  end`).join("\n")],
  commandTool: "run_shell_command",
  async rejected(t) {
    // Still idle a moment later though no hook says so (the screen agrees), and the next prompt works.
    await Bun.sleep(2_000);
    expect((await t.world().api<Json>("GET", `/v1/sessions/${t.id()}`)).body.status).toBe("idle");
    expect(await t.send("say hello")).toEqual({ delivered: true, attempts: 1 });
    await t.reach("idle");
  },
  edit: "approve",
  editPermission(_t, pending) {
    expect(pending).toMatchObject({ kind: "tool", tool: "write_file" });
    expect(pending.detail).toEndWith("hello.txt");
  },
  async answered(t) {
    const read = await t.world().api<Json>("GET", `/v1/sessions/${t.id()}/read`);
    expect(read.body.output).toContain("Blue");
  },
  interrupted(t, prompt) {
    expect(geminiRequests(t).at(-1)).toMatchObject({ prompt, status: "aborted" });
  },
  transcript(_t, messages) {
    expect(messages.map((m) => m.id)).toEqual(Array.from({ length: messages.length }, (_, i) => i + 1));
    // A message the CLI wrote again (its tool calls, its tokens) is one entry, never two.
    const keys = messages.map((m) => `${m.uuid}:${m.kind === "tool_use" ? "tools" : ""}`);
    expect(new Set(keys).size).toBe(keys.length);
    const prompts = messages.filter((m) => m.kind === "prompt").map((m) => m.text);
    expect(prompts.filter((p) => p === "say hello")).toHaveLength(3);
    expect(prompts.filter((p) => p === "ask me")).toHaveLength(2);
    expect(messages.some((m) => m.kind === "tool_use" && m.toolName === "run_shell_command")).toBe(true);
  },
  refused(t, command) {
    // Refused in BeforeTool: the model had the prompt, no dialog came.
    expect(geminiRequests(t).at(-1)?.prompt).toBe(command);
  },
  more(t) {
    const world = () => t.world();

    test("kill, then resume: the conversation goes on in the same session file", async () => {
      const id = t.id();
      const killed = await world().api<Json>("DELETE", `/v1/sessions/${id}`);
      expect(killed.body.status).toBe("killed");
      const resumed = await world().api<Json>("POST", `/v1/sessions/${id}/resume`);
      expect(resumed.status).toBe(200);
      await t.reach("idle", 60_000);
      const before = geminiRequests(t).length;
      expect(await t.send("and now?")).toEqual({ delivered: true, attempts: 1 });
      await t.reach("idle");
      const request = geminiRequests(t)[before]!;
      expect(request.prompt).toBe("and now?");
      // The model is given the conversation so far (its prompts, as the CLI keeps them).
      expect(request.history).toContain("run cmd: touch approved-loaded.txt");
      const prompts = (await t.cursor("limit=200&role=user")).messages
        .filter((m: Json) => m.kind === "prompt")
        .map((m: Json) => m.text);
      expect(prompts.at(-1)).toBe("and now?");
      expect(prompts[0]).toBe("say hello");
    }, 90_000);

    test("fork: a new session whose model requests carry the parent's conversation", async () => {
      const forked = await world().api<Json>("POST", `/v1/sessions/${t.id()}/fork`);
      expect(forked.status).toBe(201);
      const child = forked.body.id as string;
      await t.reach("idle", 60_000, child);
      const before = geminiRequests(t).length;
      expect(await t.send("what was said?", child)).toEqual({ delivered: true, attempts: 1 });
      await t.reach("idle", 30_000, child);
      const request = geminiRequests(t)[before]!;
      expect(request.prompt).toBe("what was said?");
      expect(request.history).toContain("and now?");
      // The parent's file is the parent's: the branch wrote elsewhere.
      const parentPrompts = (await t.cursor("limit=200&role=user")).messages.map((m: Json) => m.text);
      expect(parentPrompts).not.toContain("what was said?");
      const killed = await world().api<Json>("DELETE", `/v1/sessions/${child}`);
      expect(killed.body.status).toBe("killed");
    }, 90_000);

    test("acceptEdits (auto_edit): a file write goes through without a dialog", async () => {
      const { seen } = await t.turnIn("acceptEdits", "edit file");
      expect(seen.has("permission_prompt")).toBe(false);
      expect(readFileSync(join(world().workDir, "hello.txt"), "utf8")).toBe("hello from the mock\n");
    }, 60_000);

    test("bypassPermissions (yolo): a shell command runs without a dialog", async () => {
      const { seen } = await t.turnIn("bypassPermissions", "run cmd: touch yolo.txt");
      expect(seen.has("permission_prompt")).toBe(false);
      expect(existsSync(join(world().workDir, "yolo.txt"))).toBe(true);
    }, 60_000);

    test("plan: the plan's dialog, approved, and the turn goes on", async () => {
      let plan: Json | null = null;
      const { output } = await t.turnIn("plan", "make a plan", async (status) => {
        plan = status.pendingPermission;
        await world().api("POST", `/v1/sessions/${status.id}/approve`, { permissionId: plan!.id });
      });
      expect(plan).toMatchObject({ kind: "plan" });
      expect(output).toContain("Plan answer: Plan approved");
    }, 60_000);

    test("kill ends the agent process and its window (the CLI's own relauncher would outlive it)", async () => {
      const id = t.id();
      const { agentPid } = (await world().api<Json>("GET", `/v1/sessions/${id}/health`)).body;
      expect(agentPid).toBeGreaterThan(0);
      const killed = await world().api<Json>("DELETE", `/v1/sessions/${id}`);
      expect(killed.body.status).toBe("killed");
      const alive = () => isAlive(agentPid);
      for (const deadline = Date.now() + 10_000; alive() && Date.now() < deadline; ) await Bun.sleep(100);
      expect(alive()).toBe(false);
      const panes = Bun.spawnSync([
        "tmux",
        "-L",
        world().env.SVC_TMUX_SOCKET!,
        "list-panes",
        "-a",
        "-F",
        "#{@svc_session_id}",
      ]);
      expect(panes.stdout.toString()).not.toContain(id);
    });
  },
});

/** The Gemini face's main-loop requests, every round. */
function geminiRequests(t: TmuxScenarioSession) {
  return t
    .world()
    .mock.requests()
    .filter((r) => r.face === "gemini" && r.kind === "main");
}
