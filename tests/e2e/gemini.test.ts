import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { type AgentWorld, startAgentWorld } from "../helpers/agent-world.ts";
import { saturateCores } from "../helpers/load.ts";
import { isAlive } from "../helpers/stream.ts";

// biome-ignore lint/suspicious/noExplicitAny: response bodies are inspected field by field
type Json = Record<string, any>;

/**
 * A session on the REAL Gemini CLI (@google/gemini-cli 0.61.0) through the compiled binary,
 * against the mock model's Gemini face: one world, one session at a time, the tests in order.
 * What depends on timing (dialogs answered and refused, questions, interrupts) runs twice: on an
 * idle machine and with both cores saturated by busy loops.
 */
let world: AgentWorld;
let id: string;

beforeAll(async () => {
  world = await startAgentWorld({}, { agents: ["gemini"] });
}, 60_000);
afterAll(async () => {
  await world?.stop();
});

const geminiRequests = () => world.mock.requests().filter((r) => r.face === "gemini" && r.kind === "main");
const send = async (text: string, session = id) =>
  (await world.api<Json>("POST", `/v1/sessions/${session}/send`, { text })).body;

/** Waits for a status; on a timeout, the pane says why. */
async function reach(status: string, timeoutMs = 30_000, session = id): Promise<Json> {
  try {
    return await world.waitFor(session, status, timeoutMs);
  } catch (error) {
    const pane = await world.api<Json>("GET", `/v1/sessions/${session}/pane`);
    throw new Error(
      `${(error as Error).message}\n--- pane ---\n${pane.body.content ?? JSON.stringify(pane.body)}`,
    );
  }
}

async function cursor(query: string, session = id): Promise<Json> {
  return (await world.api<Json>("GET", `/v1/sessions/${session}/transcript/cursor?${query}`)).body;
}

describe("a Gemini CLI session", () => {
  test("create {agent: gemini}: the prompt reaches the model once, the session goes idle, /read has the reply", async () => {
    const created = await world.api<Json>("POST", "/v1/sessions", {
      agent: "gemini",
      workDir: world.workDir,
      prompt: "say hello",
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ agent: "gemini", promptDelivery: { delivered: true, attempts: 1 } });
    id = created.body.id;
    await reach("idle");
    expect(geminiRequests().map((r) => [r.round, r.prompt])).toEqual([[0, "say hello"]]);
    const read = await world.api<Json>("GET", `/v1/sessions/${id}/read`);
    expect(read.body.output).toContain("Hello from the mock model!");
    // ag's hooks and settings live in the session's own GEMINI_CLI_HOME: the user's are untouched.
    const settings = JSON.parse(readFileSync(join(world.env.HOME!, ".gemini", "settings.json"), "utf8"));
    expect(settings.hooks).toBeUndefined();
  }, 90_000);

  test("a 30-line prompt arrives whole, as one turn", async () => {
    const text = Array.from({ length: 30 }, (_, i) => `line ${i + 1}:\t${"·".repeat(i)}  end`).join("\n");
    const before = geminiRequests().length;
    expect(await send(text)).toEqual({ delivered: true, attempts: 1 });
    await reach("idle");
    expect(
      geminiRequests()
        .slice(before)
        .map((r) => r.prompt),
    ).toEqual([text]);
  }, 60_000);

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

      test("a shell command's dialog, approved: the command runs", async () => {
        expect(await send(`run cmd: touch approved-${tag}.txt`)).toEqual({ delivered: true, attempts: 1 });
        const waiting = await reach("permission_prompt");
        expect(waiting.pendingPermission).toMatchObject({
          kind: "tool",
          tool: "run_shell_command",
          detail: `touch approved-${tag}.txt`,
        });
        const approved = await world.api("POST", `/v1/sessions/${id}/approve`, {
          permissionId: waiting.pendingPermission.id,
        });
        expect(approved.status).toBe(200);
        await reach("idle");
        expect(existsSync(join(world.workDir, `approved-${tag}.txt`))).toBe(true);
      }, 60_000);

      test("a file write's dialog, approved: the file is written", async () => {
        expect(await send("edit file")).toEqual({ delivered: true, attempts: 1 });
        const waiting = await reach("permission_prompt");
        expect(waiting.pendingPermission).toMatchObject({ kind: "tool", tool: "write_file" });
        expect(waiting.pendingPermission.detail).toEndWith("hello.txt");
        await world.api("POST", `/v1/sessions/${id}/approve`, { permissionId: waiting.pendingPermission.id });
        await reach("idle");
        expect(readFileSync(join(world.workDir, "hello.txt"), "utf8")).toBe("hello from the mock\n");
      }, 60_000);

      test("a dialog refused: nothing runs, and the session is idle again though no hook says so", async () => {
        expect(await send(`run cmd: touch rejected-${tag}.txt`)).toEqual({ delivered: true, attempts: 1 });
        await reach("permission_prompt");
        expect((await world.api("POST", `/v1/sessions/${id}/reject`)).status).toBe(200);
        await reach("idle");
        expect(existsSync(join(world.workDir, `rejected-${tag}.txt`))).toBe(false);
        // Still idle a moment later (the screen agrees), and the next prompt works.
        await Bun.sleep(2_000);
        expect((await world.api<Json>("GET", `/v1/sessions/${id}`)).body.status).toBe("idle");
        expect(await send("say hello")).toEqual({ delivered: true, attempts: 1 });
        await reach("idle");
      }, 60_000);

      test("a question: its options are shown, an answer by number goes to the model", async () => {
        expect(await send("ask me")).toEqual({ delivered: true, attempts: 1 });
        const asking = await reach("asking");
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
        await reach("idle");
        const read = await world.api<Json>("GET", `/v1/sessions/${id}/read`);
        expect(read.body.output).toContain("Blue");
      }, 60_000);

      test("interrupt mid-turn: the reply stops and the session is idle", async () => {
        expect(await send("slow 30")).toEqual({ delivered: true, attempts: 1 });
        await reach("working");
        await Bun.sleep(1_500);
        expect((await world.api("POST", `/v1/sessions/${id}/interrupt`)).status).toBe(200);
        await reach("idle", 15_000);
        expect(geminiRequests().at(-1)).toMatchObject({ prompt: "slow 30", status: "aborted" });
      }, 60_000);
    });
  }

  test("the transcript cursor pages backwards without gaps, each message once", async () => {
    const all = await cursor("limit=200");
    const ids = all.messages.map((m: Json) => m.id);
    expect(ids).toEqual(Array.from({ length: ids.length }, (_, i) => i + 1));
    // A message the CLI wrote again (its tool calls, its tokens) is one entry, never two.
    const keys = all.messages.map((m: Json) => `${m.uuid}:${m.kind === "tool_use" ? "tools" : ""}`);
    expect(new Set(keys).size).toBe(keys.length);
    const prompts = all.messages.filter((m: Json) => m.kind === "prompt").map((m: Json) => m.text);
    expect(prompts.filter((p: string) => p === "say hello")).toHaveLength(3);
    expect(prompts.filter((p: string) => p === "ask me")).toHaveLength(2);
    expect(all.messages.some((m: Json) => m.kind === "tool_use" && m.toolName === "run_shell_command")).toBe(
      true,
    );

    const newest = await cursor("limit=3");
    expect(newest.messages).toHaveLength(3);
    const older = await cursor(`limit=3&before_id=${newest.oldest_id}`);
    expect(older.newest_id).toBe(newest.oldest_id - 1);
    expect(newest.newest_id).toBe(ids.at(-1));
  });

  test("tokens are counted from the session file", async () => {
    const session = (await world.api<Json>("GET", `/v1/sessions/${id}`)).body;
    expect(session.tokenUsage.input).toBeGreaterThan(0);
    expect(session.tokenUsage.output).toBeGreaterThan(0);
    const metrics = await world.api<Json>("GET", `/v1/sessions/${id}/metrics`);
    expect(metrics.body.estimatedCost.usd).toBeGreaterThan(0);
  });

  test("a readonly profile: the shell command is refused in BeforeTool, no dialog appears", async () => {
    await world.api("PUT", `/v1/sessions/${id}/permission-profile`, { profile: "readonly" });
    expect(await send("run cmd: touch denied.txt")).toEqual({ delivered: true, attempts: 1 });
    const seen = new Set<string>();
    for (const deadline = Date.now() + 30_000; ; ) {
      const status = (await world.api<Json>("GET", `/v1/sessions/${id}`)).body.status as string;
      seen.add(status);
      if (status === "idle" && seen.has("working")) break;
      if (Date.now() > deadline) throw new Error(`never idle again: ${[...seen]}`);
      await Bun.sleep(50);
    }
    expect(seen.has("permission_prompt")).toBe(false);
    expect(existsSync(join(world.workDir, "denied.txt"))).toBe(false);
    expect(geminiRequests().at(-1)?.prompt).toBe("run cmd: touch denied.txt");
    await world.api("PUT", `/v1/sessions/${id}/permission-profile`, { profile: "full" });
  }, 60_000);

  test("kill, then resume: the conversation goes on in the same session file", async () => {
    const killed = await world.api<Json>("DELETE", `/v1/sessions/${id}`);
    expect(killed.body.status).toBe("killed");
    const resumed = await world.api<Json>("POST", `/v1/sessions/${id}/resume`);
    expect(resumed.status).toBe(200);
    await reach("idle", 60_000);
    const before = geminiRequests().length;
    expect(await send("and now?")).toEqual({ delivered: true, attempts: 1 });
    await reach("idle");
    const request = geminiRequests()[before]!;
    expect(request.prompt).toBe("and now?");
    // The model is given the conversation so far (its prompts, as the CLI keeps them).
    expect(request.history).toContain("run cmd: touch approved-loaded.txt");
    const prompts = (await cursor("limit=200&role=user")).messages
      .filter((m: Json) => m.kind === "prompt")
      .map((m: Json) => m.text);
    expect(prompts.at(-1)).toBe("and now?");
    expect(prompts[0]).toBe("say hello");
  }, 90_000);

  test("fork: a new session whose model requests carry the parent's conversation", async () => {
    const forked = await world.api<Json>("POST", `/v1/sessions/${id}/fork`);
    expect(forked.status).toBe(201);
    const child = forked.body.id as string;
    await reach("idle", 60_000, child);
    const before = geminiRequests().length;
    expect(await send("what was said?", child)).toEqual({ delivered: true, attempts: 1 });
    await reach("idle", 30_000, child);
    const request = geminiRequests()[before]!;
    expect(request.prompt).toBe("what was said?");
    expect(request.history).toContain("and now?");
    // The parent's file is the parent's: the branch wrote elsewhere.
    const parentPrompts = (await cursor("limit=200&role=user")).messages.map((m: Json) => m.text);
    expect(parentPrompts).not.toContain("what was said?");
    const killed = await world.api<Json>("DELETE", `/v1/sessions/${child}`);
    expect(killed.body.status).toBe("killed");
  }, 90_000);

  /** A session of its own in `permissionMode`, whose first turn is `prompt`: the statuses it went through. */
  async function turnIn(permissionMode: string, prompt: string, answer?: (status: Json) => Promise<void>) {
    const created = await world.api<Json>("POST", "/v1/sessions", {
      agent: "gemini",
      workDir: world.workDir,
      permissionMode,
      prompt,
      reuse: false,
    });
    expect(created.body.promptDelivery).toEqual({ delivered: true, attempts: 1 });
    const session = created.body.id as string;
    const seen = new Set<string>();
    for (const deadline = Date.now() + 30_000; ; ) {
      const status = (await world.api<Json>("GET", `/v1/sessions/${session}`)).body;
      seen.add(status.status);
      if (status.status === "permission_prompt" && answer) await answer(status);
      if (status.status === "idle") break;
      if (Date.now() > deadline) throw new Error(`${permissionMode}: never idle: ${[...seen]}`);
      await Bun.sleep(50);
    }
    const read = (await world.api<Json>("GET", `/v1/sessions/${session}/read`)).body;
    await world.api("DELETE", `/v1/sessions/${session}`);
    return { seen, output: read.output as string };
  }

  test("acceptEdits (auto_edit): a file write goes through without a dialog", async () => {
    const { seen } = await turnIn("acceptEdits", "edit file");
    expect(seen.has("permission_prompt")).toBe(false);
    expect(readFileSync(join(world.workDir, "hello.txt"), "utf8")).toBe("hello from the mock\n");
  }, 60_000);

  test("bypassPermissions (yolo): a shell command runs without a dialog", async () => {
    const { seen } = await turnIn("bypassPermissions", "run cmd: touch yolo.txt");
    expect(seen.has("permission_prompt")).toBe(false);
    expect(existsSync(join(world.workDir, "yolo.txt"))).toBe(true);
  }, 60_000);

  test("plan: the plan's dialog, approved, and the turn goes on", async () => {
    let plan: Json | null = null;
    const { output } = await turnIn("plan", "make a plan", async (status) => {
      plan = status.pendingPermission;
      await world.api("POST", `/v1/sessions/${status.id}/approve`, { permissionId: plan!.id });
    });
    expect(plan).toMatchObject({ kind: "plan" });
    expect(output).toContain("Plan answer: Plan approved");
  }, 60_000);

  test("kill ends the agent process and its window (the CLI's own relauncher would outlive it)", async () => {
    const { agentPid } = (await world.api<Json>("GET", `/v1/sessions/${id}/health`)).body;
    expect(agentPid).toBeGreaterThan(0);
    const killed = await world.api<Json>("DELETE", `/v1/sessions/${id}`);
    expect(killed.body.status).toBe("killed");
    const alive = () => isAlive(agentPid);
    for (const deadline = Date.now() + 10_000; alive() && Date.now() < deadline; ) await Bun.sleep(100);
    expect(alive()).toBe(false);
    const panes = Bun.spawnSync([
      "tmux",
      "-L",
      world.env.SVC_TMUX_SOCKET!,
      "list-panes",
      "-a",
      "-F",
      "#{@svc_session_id}",
    ]);
    expect(panes.stdout.toString()).not.toContain(id);
  });
});
