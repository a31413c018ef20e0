import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { isThreadOpen } from "../../src/agents/codex/threads.ts";
import { type AgentWorld, startAgentWorld } from "../helpers/agent-world.ts";
import { killTmuxServer } from "../helpers/tmux.ts";

// biome-ignore lint/suspicious/noExplicitAny: response bodies are inspected field by field
type Json = Record<string, any>;

/**
 * The REAL Codex CLI (0.169.0; CODEX_BIN for another) through the compiled binary: a
 * conversation forked and resumed (Codex names its threads itself: ag finds them through the
 * rollout), never resumed while another Codex writes it, and what each neutral permission mode
 * lets through. At most two sessions at a time (the user's own Codex counted).
 */
let world: AgentWorld;

beforeAll(async () => {
  world = await startAgentWorld({}, { agents: ["codex"] });
}, 60_000);
afterAll(async () => {
  await world?.stop();
});

async function create(body: Json): Promise<string> {
  const created = await world.api<Json>("POST", "/v1/sessions", { agent: "codex", reuse: false, ...body });
  expect(created.status).toBe(201);
  if (body.prompt) expect(created.body.promptDelivery).toMatchObject({ delivered: true, attempts: 1 });
  return created.body.id;
}

/** The history (every human prompt) the model got with the last request for `prompt`. */
function historyOf(prompt: string): string[] | undefined {
  return world.mock.requests().findLast((r) => r.kind === "main" && r.prompt === prompt)?.history;
}

describe("a Codex conversation", () => {
  let parent: string;
  /** Codex's rollout files in the world's home: one per thread. */
  const rollouts = () =>
    [
      ...new Bun.Glob(".codex/sessions/*/*/*/rollout-*.jsonl").scanSync({ cwd: world.env.HOME!, dot: true }),
    ].sort();

  test("forked: the branch starts from the parent's conversation, in a rollout of its own", async () => {
    parent = await create({ workDir: world.workDir, prompt: "say hello" });
    await world.waitFor(parent, "idle", 60_000);

    const fork = await world.api<Json>("POST", `/v1/sessions/${parent}/fork`);
    expect(fork.status).toBe(201);
    const branch = fork.body.id as string;
    await world.waitFor(branch, "idle", 60_000);
    const sent = await world.api<Json>("POST", `/v1/sessions/${branch}/send`, {
      text: "say hello from the fork",
    });
    expect(sent.body).toEqual({ delivered: true, attempts: 1 });
    await world.waitFor(branch, "idle", 60_000);
    expect(historyOf("say hello from the fork")).toEqual(["say hello", "say hello from the fork"]);
    const read = (await world.api<Json>("GET", `/v1/sessions/${branch}/read`)).body;
    expect(read.output).toContain("Hello from the mock model!");
    expect(read.tokenUsage.output).toBeGreaterThan(0);
    expect(rollouts()).toHaveLength(2);
    // The branch's rollout holds what follows the fork (Codex points at the parent's for the rest).
    const page = await world.api<Json>("GET", `/v1/sessions/${branch}/transcript/cursor?role=user&limit=200`);
    expect((page.body.messages as Json[]).map((m) => m.text)).toEqual(["say hello from the fork"]);
    expect((await world.api<Json>("DELETE", `/v1/sessions/${branch}`)).status).toBe(200);
  }, 120_000);

  test("ag killed mid-turn and restarted: the session is re-adopted, its reply readable, its hooks arrive", async () => {
    const sent = await world.api<Json>("POST", `/v1/sessions/${parent}/send`, { text: "slow 3" });
    expect(sent.body).toEqual({ delivered: true, attempts: 1 });
    await world.waitFor(parent, "working", 30_000);
    await world.restart("SIGKILL");
    expect(world.ag.stderr()).toContain("re-adopted 1 session(s)");
    await world.waitFor(parent, "idle", 30_000);
    expect((await world.api<Json>("GET", `/v1/sessions/${parent}/read`)).body.output).toContain(
      "streamed slowly",
    );
    const again = await world.api<Json>("POST", `/v1/sessions/${parent}/send`, { text: "say hello" });
    expect(again.body).toEqual({ delivered: true, attempts: 1 });
    await world.waitFor(parent, "idle", 30_000);
  }, 90_000);

  test("resumed after its end: the same thread and rollout go on", async () => {
    expect((await world.api<Json>("DELETE", `/v1/sessions/${parent}`)).status).toBe(200);
    const resumed = await world.api<Json>("POST", `/v1/sessions/${parent}/resume`);
    expect(resumed.status).toBe(200);
    await world.waitFor(parent, "idle", 60_000);
    const sent = await world.api<Json>("POST", `/v1/sessions/${parent}/send`, { text: "say hello again" });
    expect(sent.body).toEqual({ delivered: true, attempts: 1 });
    await world.waitFor(parent, "idle", 60_000);
    expect(historyOf("say hello again")).toEqual(["say hello", "slow 3", "say hello", "say hello again"]);
    expect(rollouts()).toHaveLength(2);
    const page = await world.api<Json>("GET", `/v1/sessions/${parent}/transcript/cursor?role=user&limit=200`);
    expect((page.body.messages as Json[]).map((m) => m.text)).toEqual([
      "say hello",
      "slow 3",
      "say hello",
      "say hello again",
    ]);
    await world.api("DELETE", `/v1/sessions/${parent}`);
  }, 120_000);

  test("open in the user's own Codex: a resume is refused (one writer per thread), a fork is not", async () => {
    // The parent's thread: the first rollout written (their names start with the time).
    const rollout = join(world.env.HOME!, rollouts()[0]!);
    const thread = rollout.match(/([0-9a-f-]{36})\.jsonl$/)![1]!;
    const user = await usersCodex(rollout, thread);
    try {
      const refused = await world.api<Json>("POST", `/v1/sessions/${parent}/resume`);
      // The adapter's own refusal: 409 CONFLICT, not the launch's 503.
      expect(refused.status).toBe(409);
      expect(refused.body.code).toBe("CONFLICT");
      expect(refused.body.error).toContain(`Codex conversation ${thread} is open in another Codex`);
      expect((await world.api<Json>("GET", `/v1/sessions/${parent}`)).body.status).toBe("killed");
      const fork = await world.api<Json>("POST", `/v1/sessions/${parent}/fork`);
      expect(fork.status).toBe(201);
      await world.waitFor(fork.body.id, "idle", 60_000);
      await world.api("DELETE", `/v1/sessions/${fork.body.id}`);
    } finally {
      await user.stop();
    }
    const resumed = await world.api<Json>("POST", `/v1/sessions/${parent}/resume`);
    expect(resumed.status).toBe(200);
    await world.waitFor(parent, "idle", 60_000);
    await world.api("DELETE", `/v1/sessions/${parent}`);
  }, 120_000);
});

/**
 * The user's own Codex (its TUI, on a tmux socket of its own) resuming `thread`, in the world's
 * home and folder, once it holds the thread's writer lock. (The session ag just ended may still
 * hold it for a moment: the user's Codex then shows the lock notice, and retries with r.)
 */
async function usersCodex(rollout: string, thread: string): Promise<{ stop(): Promise<void> }> {
  const socket = `ag-test-users-codex-${process.pid}`;
  const env = Object.entries(world.env).map(([k, v]) => `${k}=${v}`);
  const tmux = (...more: string[]) =>
    Bun.spawnSync(["tmux", "-L", socket, "-f", "/dev/null", ...more], { stdout: "pipe", stderr: "pipe" });
  tmux(
    ...["new-session", "-d", "-s", "user", "-x", "120", "-y", "40", "-c", world.workDir],
    ...["env", "-i", "TERM=tmux-256color", "LANG=C.UTF-8", ...env],
    ...["codex", "--no-daemon", "resume", thread],
  );
  /** Its tmux server ended, and with it the Codex: once the lock is free, it is gone. */
  const stop = async () => {
    killTmuxServer(socket);
    const until = Date.now() + 10_000;
    while ((await isThreadOpen(rollout, thread)) && Date.now() < until) await Bun.sleep(100);
  };
  const deadline = Date.now() + 30_000;
  for (;;) {
    const screen = tmux("capture-pane", "-p", "-t", "user").stdout.toString();
    const locked = /open in another app/.test(screen);
    if (!locked && /\? for shortcuts/.test(screen) && (await isThreadOpen(rollout, thread))) return { stop };
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`the user's Codex never took the thread:\n${screen}`);
    }
    if (locked) tmux("send-keys", "-t", "user", "r");
    await Bun.sleep(300);
  }
}

describe("Codex's permission modes", () => {
  /** A session in its own folder, in `mode`, that runs `prompt` to its end without a dialog. */
  async function runs(mode: string, folder: string, prompt: string): Promise<string> {
    const workDir = join(world.workDir, folder);
    mkdirSync(workDir, { recursive: true });
    const id = await create({ workDir, permissionMode: mode, prompt });
    const seen = new Set<string>();
    const deadline = Date.now() + 60_000;
    for (;;) {
      const status = (await world.api<Json>("GET", `/v1/sessions/${id}`)).body.status as string;
      seen.add(status);
      if (status === "idle" && world.prompts().includes(prompt)) break;
      if (Date.now() > deadline) throw new Error(`${mode}: never idle after the prompt: ${[...seen]}`);
      await Bun.sleep(100);
    }
    expect(seen.has("permission_prompt")).toBe(false);
    await world.api("DELETE", `/v1/sessions/${id}`);
    return workDir;
  }

  test("bypassPermissions: a command runs unasked", async () => {
    const dir = await runs("bypassPermissions", "bypass", "run cmd: touch bypass.txt");
    expect(existsSync(join(dir, "bypass.txt"))).toBe(true);
  }, 90_000);

  test("acceptEdits: an edit in the workDir goes through unasked", async () => {
    const dir = await runs("acceptEdits", "accept", "edit file");
    expect(existsSync(join(dir, "hello.txt"))).toBe(true);
  }, 90_000);

  test("dontAsk: what would ask is refused and the model told so, nothing runs", async () => {
    // A model that asks to run unsandboxed although told it cannot.
    world.mock.addRules([
      {
        name: "escalate anyway",
        match: "escalate anyway",
        steps: [
          {
            tool: {
              name: "Bash",
              input: { command: "touch refused.txt", sandbox_permissions: "require_escalated" },
            },
          },
          { text: "Told: {{tool_result}}" },
        ],
      },
    ]);
    const dir = await runs("dontAsk", "dontask", "escalate anyway");
    expect(existsSync(join(dir, "refused.txt"))).toBe(false);
    const told = world.mock.requests().findLast((r) => r.prompt === "escalate anyway" && r.round === 1);
    expect(told).toBeDefined();
  }, 90_000);

  test("plan: nothing is changed, nothing asks", async () => {
    const dir = await runs("plan", "plan", "edit file");
    expect(existsSync(join(dir, "hello.txt"))).toBe(false);
  }, 90_000);

  test("auto: Codex's reviewer (asked through the model) approves, the command runs unasked", async () => {
    const dir = await runs("auto", "auto", "run cmd: touch reviewed.txt");
    expect(existsSync(join(dir, "reviewed.txt"))).toBe(true);
    expect(world.mock.requests().some((r) => r.rule === "approval-review")).toBe(true);
  }, 90_000);

  test("a mode Codex has no equivalent of does not exist: every neutral mode is mapped", async () => {
    const agents = await world.api<Json[]>("GET", "/v1/agents");
    expect(agents.body.find((a) => a.id === "codex")?.permissionModes.sort()).toEqual(
      ["acceptEdits", "auto", "bypassPermissions", "default", "dontAsk", "plan"].sort(),
    );
  });
});
