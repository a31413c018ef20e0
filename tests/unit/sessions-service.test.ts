import { describe, expect, test } from "bun:test";
import { testApp } from "../helpers/app.ts";
import { hook, idleWithInput, pane, simulateAgents } from "../helpers/simulated-agent.ts";
import { tempDir } from "../helpers/temp.ts";
import { until } from "../helpers/until.ts";

// biome-ignore lint/suspicious/noExplicitAny: response bodies are inspected field by field
type Json = Record<string, any>;

async function create(app: ReturnType<typeof testApp>, body: Record<string, unknown>) {
  const response = await app.request("POST", "/v1/sessions", { body: { workDir: tempDir(), ...body } });
  return { status: response.status, body: (await response.json()) as Json };
}

describe("creating a session (fake tmux, real Claude adapter, captured screens)", () => {
  test("launches the agent in a tagged window and becomes idle when its UI is up", async () => {
    const app = testApp();
    simulateAgents(app);
    const { status, body } = await create(app, { name: "alpha" });
    expect(status).toBe(201);
    expect(body).toMatchObject({ name: "alpha", reused: false, promptDelivery: null, status: "working" });
    const window = [...app.tmux.server.windows.values()][0]!;
    expect(window.tag).toBe(body.id);
    expect(window.command).toContain("--session-id");
    expect(window.command).toContain(body.id);
    expect(Object.keys(window.env)).not.toContain("ANTHROPIC_API_KEY");
    await until(() => app.repo.get(body.id)?.status === "idle");
    expect(app.events.map((e) => e.event)).toEqual(["session.created", "session.idle", "status.idle"]);
    expect(app.events[0]!.session).toEqual({ id: body.id, name: "alpha", workDir: body.workDir });
  });

  test("delivers the prompt as one paste, confirmed by the agent's hook: attempts 1", async () => {
    const app = testApp();
    simulateAgents(app);
    const { body } = await create(app, { prompt: "line one\nline two\r\nline three" });
    expect(body.promptDelivery).toEqual({ delivered: true, attempts: 1 });
    const inputs = app.tmux.inputs(body.paneId ?? app.repo.get(body.id)!.paneId!);
    expect(inputs.filter((i) => i.kind === "paste")).toEqual([
      { kind: "paste", text: "line one\nline two\nline three" },
    ]);
    expect(app.repo.get(body.id)!.status).toBe("working");
  });

  test("an Enter that is lost is pressed again while the text is still in the box: attempts 2", async () => {
    const app = testApp();
    const sim = simulateAgents(app, { acceptEnter: (n) => n >= 2 });
    const { body } = await create(app, { prompt: "hello" });
    expect(body.promptDelivery).toEqual({ delivered: true, attempts: 2 });
    expect(sim.enters()).toBe(2);
    const pastes = app.tmux.inputs(app.repo.get(body.id)!.paneId!).filter((i) => i.kind === "paste");
    expect(pastes).toHaveLength(1); // never pasted twice
  });

  test("a paste the agent drops (its box hidden, then back empty) is typed again, once: attempts 1", async () => {
    const app = testApp();
    const sim = simulateAgents(app, { dropPaste: (n) => n === 1 });
    const { body } = await create(app, { prompt: "hello" });
    expect(body.promptDelivery).toEqual({ delivered: true, attempts: 1 });
    expect(sim.pastes()).toBe(2);
    expect(sim.enters()).toBe(1);
  });

  test("an agent that drops every paste: not delivered, no Enter on its empty box", async () => {
    const app = testApp();
    const sim = simulateAgents(app, { dropPaste: () => true });
    const { body } = await create(app, { prompt: "hello" });
    expect(body.promptDelivery).toEqual({
      delivered: false,
      attempts: 0,
      reason: "the agent dropped every paste",
    });
    expect(sim.pastes()).toBe(3);
    const keys = app.tmux.inputs(app.repo.get(body.id)!.paneId!).filter((i) => i.kind === "keys");
    expect(keys.flatMap((i) => i.keys)).not.toContain("Enter");
  });

  test("never confirmed and still in the box after 3 Enters: delivered false, attempts 3", async () => {
    const app = testApp();
    simulateAgents(app, { acceptEnter: () => false });
    const { body } = await create(app, { prompt: "hello" });
    expect(body.promptDelivery).toEqual({
      delivered: false,
      attempts: 3,
      reason: "the prompt stayed in the input box",
    });
  });

  test("a screen that does not change is not captured over and over while a prompt waits", async () => {
    const app = testApp();
    simulateAgents(app, { acceptEnter: () => false, bootMs: 300 });
    let captures = 0;
    const capture = app.tmux.capturePane.bind(app.tmux);
    // A capture takes a moment, as a real one does, so reads overlap as they do with tmux.
    app.tmux.capturePane = async (paneId) => {
      captures++;
      await Bun.sleep(1);
      return capture(paneId);
    };
    const { body } = await create(app, { prompt: "hello" });
    expect(body.promptDelivery).toMatchObject({ delivered: false, attempts: 3 });
    // Reads follow screen changes and the delivery's own steps (a few dozen), never a loop.
    expect(captures).toBeLessThan(60);
  });

  test("a confirmation later than Enter's window, the box emptied: delivered, Enter pressed once", async () => {
    const app = testApp(); // confirmTimeoutMs 300, readyTimeoutMs 2 000
    const sim = simulateAgents(app, { hookDelayMs: 1_200 });
    const { body } = await create(app, { prompt: "hello" });
    expect(body.promptDelivery).toEqual({ delivered: true, attempts: 1 });
    expect(sim.enters()).toBe(1);
  });

  test("submitted but the hook is lost: the box is empty, so Enter is not pressed again", async () => {
    const app = testApp();
    const sim = simulateAgents(app, { hook: false });
    const { body } = await create(app, { prompt: "hello" });
    expect(body.promptDelivery).toEqual({
      delivered: false,
      attempts: 1,
      reason: "the agent never confirmed the prompt",
    });
    expect(sim.enters()).toBe(1);
  });

  test("memoryKeys are prepended as SPEC's [Memory context] block; a missing key is a warning", async () => {
    const app = testApp({ memory: { "project/style": "tabs", "user/name": "Ada" } });
    simulateAgents(app);
    const { body } = await create(app, {
      prompt: "go",
      memoryKeys: ["project/style", "nope/missing", "user/name"],
    });
    expect(body.warnings).toEqual(["memory key not found: nope/missing"]);
    const paste = app.tmux.inputs(app.repo.get(body.id)!.paneId!).find((i) => i.kind === "paste");
    expect(paste).toEqual({
      kind: "paste",
      text: "[Memory context]\nproject/style: tabs\nuser/name: Ada\n\ngo",
    });
  });

  test("bad input: relative or missing workDir (400), control characters (400), over the limit (429)", async () => {
    const app = testApp({ maxSessions: 1 });
    simulateAgents(app);
    expect((await create(app, { workDir: "relative" })).body.code).toBe("INVALID_WORKDIR");
    expect((await create(app, { workDir: "/no/such/dir/anywhere" })).body.code).toBe("INVALID_WORKDIR");
    expect((await create(app, { prompt: "bell\u0007" })).body.code).toBe("VALIDATION_ERROR");
    const first = await create(app, {});
    expect(first.status).toBe(201);
    const second = await create(app, {});
    expect(second.status).toBe(429);
    expect(second.body.code).toBe("SESSION_LIMIT_REACHED");
    expect(app.tmux.server.windows.size).toBe(1);
  });

  test("a prompt of exactly 256 KiB (multi-byte, tabs, many lines) is one paste, byte for byte", async () => {
    const app = testApp();
    simulateAgents(app);
    const unit = "ligne\tété ✓\n"; // 15 bytes
    const text = unit.repeat(Math.floor((256 * 1024) / Buffer.byteLength(unit)));
    const padded = text + "x".repeat(256 * 1024 - Buffer.byteLength(text));
    expect(Buffer.byteLength(padded)).toBe(256 * 1024);
    const { body } = await create(app, { prompt: padded });
    expect(body.promptDelivery).toEqual({ delivered: true, attempts: 1 });
    const pastes = app.tmux.inputs(app.repo.get(body.id)!.paneId!).filter((i) => i.kind === "paste");
    expect(pastes).toEqual([{ kind: "paste", text: padded }]);
  });

  test("a prompt over 256 KiB → 413, nothing launched", async () => {
    const app = testApp();
    const { status, body } = await create(app, { prompt: "x".repeat(256 * 1024 + 1) });
    expect(status).toBe(413);
    expect(body.code).toBe("PAYLOAD_TOO_LARGE");
    expect(app.tmux.server.windows.size).toBe(0);
  });
});

describe("a running session", () => {
  async function running() {
    const app = testApp();
    simulateAgents(app);
    const { body } = await create(app, {});
    const id = body.id as string;
    await until(() => app.repo.get(id)?.status === "idle");
    return { app, id, paneId: app.repo.get(id)!.paneId! };
  }

  test("hooks move it: prompt → working, permission → permission_prompt (+event), Stop → idle", async () => {
    const { app, id } = await running();
    await hook(app, id, "UserPromptSubmit", { prompt: "run it", prompt_id: "x1" });
    expect(app.repo.get(id)!.status).toBe("working");
    await hook(app, id, "PermissionRequest", { tool_name: "Bash", tool_input: { command: "rm -rf build" } });
    expect(app.repo.get(id)!.pendingPermission).toEqual({
      // The run's tag: an id from before a restart never matches a dialog of this run.
      id: expect.stringMatching(/^perm-1-[0-9a-f]{4}$/),
      kind: "tool",
      tool: "Bash",
      detail: "rm -rf build",
    });
    const requested = app.events.find((e) => e.event === "permission.requested")!;
    expect(requested.meta.pendingPermission).toMatchObject({ tool: "Bash" });
    await hook(app, id, "Stop", {});
    expect(app.repo.get(id)!.status).toBe("idle");
  });

  test("approve and reject answer the dialog with the agent's keys; errors when nothing waits", async () => {
    const { app, id, paneId } = await running();
    const none = await app.request("POST", `/v1/sessions/${id}/approve`);
    expect((await none.json()).code).toBe("NO_PENDING_PERMISSION");
    await hook(app, id, "PermissionRequest", { tool_name: "Write", tool_input: { file_path: "/w/a.txt" } });
    expect(
      (
        await (
          await app.request("POST", `/v1/sessions/${id}/approve`, { body: { permissionId: "nope" } })
        ).json()
      ).code,
    ).toBe("PERMISSION_MISMATCH");
    const permissionId = app.repo.get(id)!.pendingPermission!.id;
    expect((await app.request("POST", `/v1/sessions/${id}/approve`, { body: { permissionId } })).status).toBe(
      200,
    );
    expect(app.tmux.typed(paneId).at(-1)).toBe("Enter");
    await hook(app, id, "PermissionRequest", { tool_name: "Bash", tool_input: { command: "ls" } });
    expect((await app.request("POST", `/v1/sessions/${id}/reject`)).status).toBe(200);
    expect(app.tmux.typed(paneId).at(-1)).toBe("Escape");
  });

  test("send during a permission prompt → 409 SESSION_BUSY", async () => {
    const { app, id } = await running();
    await hook(app, id, "PermissionRequest", { tool_name: "Bash", tool_input: { command: "ls" } });
    const response = await app.request("POST", `/v1/sessions/${id}/send`, { body: { text: "hi" } });
    expect(response.status).toBe(409);
    expect((await response.json()).code).toBe("SESSION_BUSY");
  });

  test("interrupt sends Ctrl+C while working and is refused at idle; escape sends Escape", async () => {
    const { app, id, paneId } = await running();
    expect((await app.request("POST", `/v1/sessions/${id}/interrupt`)).status).toBe(409);
    await hook(app, id, "UserPromptSubmit", { prompt: "slow", prompt_id: "s1" });
    expect((await app.request("POST", `/v1/sessions/${id}/interrupt`)).status).toBe(200);
    expect(app.tmux.typed(paneId).at(-1)).toBe("C-c");
    expect((await app.request("POST", `/v1/sessions/${id}/escape`)).status).toBe(200);
    expect(app.tmux.typed(paneId).at(-1)).toBe("Escape");
  });

  test("an interrupt with no hook: once the screen showed the turn, its interrupt marker turns it idle", async () => {
    const { app, id, paneId } = await running();
    await hook(app, id, "UserPromptSubmit", { prompt: "slow", prompt_id: "s2" });
    // A marker drawn before the screen ever showed this turn may be the last turn's: not enough.
    app.tmux.setScreen(paneId, pane("05-interrupted"));
    await Bun.sleep(50);
    expect(app.repo.get(id)!.status).toBe("working");
    app.tmux.setScreen(paneId, pane("04-working"));
    await Bun.sleep(50);
    app.tmux.setScreen(paneId, pane("05-interrupted"));
    await until(() => app.repo.get(id)!.status === "idle");
    expect(app.events.find((e) => e.event === "session.turn_ended")?.meta.reason).toBe("interrupted");
  });

  test("a permission dialog on screen without its hook still becomes permission_prompt", async () => {
    const { app, id, paneId } = await running();
    app.tmux.setScreen(paneId, pane("06-permission-bash"));
    await until(() => app.repo.get(id)!.status === "permission_prompt");
    expect(app.repo.get(id)!.pendingPermission).toMatchObject({
      kind: "tool",
      tool: "Bash",
      detail: "touch created-by-bash.txt",
    });
  });

  test("kill: window closed, killed, session.killed + session.ended; a second kill → 404", async () => {
    const { app, id } = await running();
    const windowId = app.repo.get(id)!.windowId!;
    const killed = await app.request("DELETE", `/v1/sessions/${id}`);
    expect((await killed.json()).status).toBe("killed");
    expect(app.tmux.window(windowId)).toBeUndefined();
    expect(app.events.map((e) => e.event).slice(-2)).toEqual(["session.killed", "session.ended"]);
    expect(app.events.filter((e) => e.event === "status.dead")).toHaveLength(0);
    expect((await app.request("DELETE", `/v1/sessions/${id}`)).status).toBe(404);
  });

  test("the agent dying → crashed with status.dead; exiting cleanly → completed", async () => {
    const { app, id, paneId } = await running();
    app.tmux.exit(paneId, 1);
    await until(() => app.repo.get(id)!.status === "crashed");
    expect(app.events.some((e) => e.event === "status.dead")).toBe(true);
    const other = await running();
    other.app.tmux.exit(other.paneId, 0);
    await until(() => other.app.repo.get(other.id)!.status === "completed");
  });

  test("its window disappearing → crashed; the tmux server dying → re-adoption marks it crashed", async () => {
    const { app, id } = await running();
    app.tmux.killServer();
    await until(() => app.repo.get(id)!.status === "crashed");
  });

  test("the pane route shows the screen", async () => {
    const { app, id, paneId } = await running();
    app.tmux.setScreen(paneId, idleWithInput("draft"));
    const body = await (await app.request("GET", `/v1/sessions/${id}/pane`)).json();
    expect(body.content).toContain("❯\u00a0draft");
  });
});

describe("hook authentication", () => {
  test("wrong secret or unknown session → 401; unknown event → 404; nothing changes", async () => {
    const app = testApp();
    simulateAgents(app);
    const { body } = await create(app, {});
    await until(() => app.repo.get(body.id)?.status === "idle");
    const wrong = await hook(app, body.id, "UserPromptSubmit", { prompt: "x" }, "not-the-secret");
    expect(wrong.status).toBe(401);
    expect((await hook(app, crypto.randomUUID(), "Stop", {}, "x")).status).toBe(401);
    expect((await hook(app, body.id, "NoSuchEvent", {})).status).toBe(404);
    expect(app.repo.get(body.id)!.status).toBe("idle");
    expect(app.logs.join("\n")).not.toContain(app.repo.get(body.id)!.hookSecret);
  });

  test("the hook route never answers with a decision", async () => {
    const app = testApp();
    simulateAgents(app);
    const { body } = await create(app, {});
    const response = await hook(app, body.id, "PreToolUse", {
      tool_name: "Bash",
      tool_input: { command: "rm -rf /" },
    });
    expect(await response.json()).toEqual({});
    const permission = await hook(app, body.id, "PermissionRequest", {
      tool_name: "Bash",
      tool_input: { command: "x" },
    });
    expect(await permission.json()).toEqual({});
  });
});
