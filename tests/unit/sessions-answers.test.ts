import { describe, expect, test } from "bun:test";
import { testApp } from "../helpers/app.ts";
import { hook, idleSession, pane, postHook, simulateAgents } from "../helpers/simulated-agent.ts";

// biome-ignore lint/suspicious/noExplicitAny: response bodies are inspected field by field
type Json = Record<string, any>;

/** AskUserQuestion as Claude Code's PermissionRequest hook carries it (recorded with 2.1.197). */
const ASK = {
  tool_name: "AskUserQuestion",
  tool_input: {
    questions: [
      {
        question: "Which color should the button be?",
        header: "Color",
        options: [
          { label: "Red", description: "A bold red button" },
          { label: "Blue", description: "A calm blue button" },
        ],
        multiSelect: false,
      },
    ],
  },
};

async function asking() {
  const app = testApp();
  simulateAgents(app);
  const { id, paneId } = await idleSession(app);
  await hook(app, id, "UserPromptSubmit", { prompt: "ask me", prompt_id: "q1" });
  await hook(app, id, "PreToolUse", { ...ASK, tool_use_id: "toolu_1" });
  await hook(app, id, "PermissionRequest", ASK);
  return { app, id, paneId, typed: () => app.tmux.typed(paneId) };
}

const post = async (app: ReturnType<typeof testApp>, path: string, body?: unknown) => {
  const response = await app.request("POST", path, body === undefined ? {} : { body });
  return { status: response.status, body: (await response.json()) as Json };
};

describe("a question", () => {
  test("is pending with its question and options, and an event that says them", async () => {
    const { app, id } = await asking();
    const session = app.repo.get(id)!;
    expect(session.status).toBe("asking");
    expect(session.pendingPermission).toEqual({
      id: expect.stringMatching(/^perm-1-[0-9a-f]{4}$/),
      kind: "question",
      tool: "AskUserQuestion",
      detail: "Which color should the button be?",
      question: "Which color should the button be?",
      options: [
        { index: 1, label: "Red", description: "A bold red button" },
        { index: 2, label: "Blue", description: "A calm blue button" },
      ],
    });
    const asked = app.events.find((e) => e.event === "status.question")!;
    expect(asked.detail).toBe("Which color should the button be? — 1. Red · 2. Blue");
  });

  test("POST /answer {option} presses the option's digit alone (it picks and submits)", async () => {
    const { app, id, typed } = await asking();
    const permissionId = app.repo.get(id)!.pendingPermission!.id;
    const answered = await post(app, `/v1/sessions/${id}/answer`, { option: 2, permissionId });
    expect(answered.status).toBe(200);
    expect(typed()).toEqual(["2"]);
    expect(answered.body.status).toBe("working");
    expect(answered.body.pendingPermission).toBeNull();
  });

  test('POST /answer {text}: the "Type something." row, the text, Enter', async () => {
    const { app, id, paneId } = await asking();
    expect((await post(app, `/v1/sessions/${id}/answer`, { text: "Green please" })).status).toBe(200);
    expect(app.tmux.inputs(paneId).slice(-3)).toEqual([
      { kind: "keys", keys: ["3"] },
      { kind: "literal", text: "Green please" },
      { kind: "keys", keys: ["Enter"] },
    ]);
  });

  test("/send answers it: a bare number picks that option, other text is an answer of its own", async () => {
    const byNumber = await asking();
    const sent = await post(byNumber.app, `/v1/sessions/${byNumber.id}/send`, { text: " 1 " });
    expect(sent).toEqual({ status: 200, body: { delivered: true, attempts: 1, answered: true } });
    expect(byNumber.typed()).toEqual(["1"]);
    const byText = await asking();
    await post(byText.app, `/v1/sessions/${byText.id}/send`, { text: "a dark green" });
    expect(
      byText.app.tmux.inputs(byText.paneId).some((i) => i.kind === "literal" && i.text === "a dark green"),
    ).toBe(true);
    // No prompt was pasted: the text went into the question's own row.
    expect(byText.app.tmux.inputs(byText.paneId).filter((i) => i.kind === "paste")).toEqual([]);
  });

  test("what cannot answer it says why, and presses nothing", async () => {
    const { app, id, typed } = await asking();
    const approve = await post(app, `/v1/sessions/${id}/approve`);
    expect(approve.status).toBe(409);
    expect(approve.body.error).toContain(`/v1/sessions/${id}/answer`);
    expect((await post(app, `/v1/sessions/${id}/answer`, { option: 3 })).body.code).toBe("VALIDATION_ERROR");
    expect((await post(app, `/v1/sessions/${id}/answer`, { option: 1, text: "x" })).status).toBe(400);
    expect((await post(app, `/v1/sessions/${id}/answer`, {})).status).toBe(400);
    expect((await post(app, `/v1/sessions/${id}/answer`, { text: "two\nlines" })).status).toBe(400);
    expect((await post(app, `/v1/sessions/${id}/answer`, { text: "a\tb" })).status).toBe(400);
    expect((await post(app, `/v1/sessions/${id}/answer`, { option: 100 })).status).toBe(400);
    expect(
      (await post(app, `/v1/sessions/${id}/answer`, { option: 1, permissionId: "perm-9" })).body.code,
    ).toBe("PERMISSION_MISMATCH");
    expect(typed()).toEqual([]);
    // Reject dismisses it (Escape), as the agent's own Esc does.
    expect((await post(app, `/v1/sessions/${id}/reject`)).status).toBe(200);
    expect(typed()).toEqual(["Escape"]);
    expect(app.repo.get(id)!.status).toBe("idle");
  });

  test("an answer to a tool permission is refused; nothing waiting → 409", async () => {
    const app = testApp();
    simulateAgents(app);
    const { id } = await idleSession(app);
    expect((await post(app, `/v1/sessions/${id}/answer`, { option: 1 })).body.code).toBe(
      "NO_PENDING_PERMISSION",
    );
    await hook(app, id, "PermissionRequest", { tool_name: "Bash", tool_input: { command: "make" } });
    expect((await post(app, `/v1/sessions/${id}/answer`, { option: 1 })).body.code).toBe("CONFLICT");
  });

  test("a multi-select question is refused with the reason, nothing pressed", async () => {
    const app = testApp();
    simulateAgents(app);
    const { id, paneId } = await idleSession(app);
    const multi = {
      ...ASK,
      tool_input: { questions: [{ ...ASK.tool_input.questions[0], multiSelect: true }] },
    };
    await hook(app, id, "PermissionRequest", multi);
    expect(app.repo.get(id)!.pendingPermission).toMatchObject({ multiSelect: true });
    const refused = await post(app, `/v1/sessions/${id}/answer`, { option: 1 });
    expect(refused.status).toBe(409);
    expect(refused.body.error).toContain("multi-select");
    expect(app.tmux.typed(paneId)).toEqual([]);
  });

  test("two answers to one dialog at once: the second is refused, it never reaches the next dialog", async () => {
    const { app, id, typed } = await asking();
    const [first, second] = await Promise.all([
      post(app, `/v1/sessions/${id}/answer`, { option: 1 }),
      post(app, `/v1/sessions/${id}/answer`, { option: 2 }),
    ]);
    expect([first.status, second.status].sort()).toEqual([200, 409]);
    expect(typed()).toHaveLength(1);
  });

  test("a question whose options are unknown takes only what a digit picks", async () => {
    const app = testApp();
    simulateAgents(app);
    const { id } = await idleSession(app);
    await hook(app, id, "PermissionRequest", { tool_name: "AskUserQuestion", tool_input: {} });
    expect((await post(app, `/v1/sessions/${id}/answer`, { option: 12 })).body.code).toBe("VALIDATION_ERROR");
    expect((await post(app, `/v1/sessions/${id}/answer`, { option: 9 })).status).toBe(200);
  });

  test("a question seen only on screen carries the options shown there", async () => {
    const app = testApp();
    simulateAgents(app);
    const { id, paneId } = await idleSession(app);
    app.tmux.setScreen(paneId, pane("10-ask-question"));
    await app.live.running(id).readScreen();
    expect(app.repo.get(id)!.pendingPermission).toMatchObject({
      kind: "question",
      question: "Which color should the button be?",
      options: [
        { index: 1, label: "Red" },
        { index: 2, label: "Blue" },
      ],
    });
  });
});

describe("what the agent records its own way", () => {
  test("a prompt with tabs is confirmed though the agent records each tab as four spaces", async () => {
    const app = testApp();
    simulateAgents(app, { recorded: (text) => text.replaceAll("\t", "    ").trimEnd() });
    const { id } = await idleSession(app);
    const sent = await post(app, `/v1/sessions/${id}/send`, { text: "col1\tcol2\nx\ty\t" });
    expect(sent.body).toEqual({ delivered: true, attempts: 1 });
  });

  test("a shell command, which sends no hook, is delivered once Enter empties the box", async () => {
    const app = testApp();
    simulateAgents(app, { hook: false });
    const { id, paneId } = await idleSession(app);
    const sent = await post(app, `/v1/sessions/${id}/send`, { text: "!sleep 30" });
    expect(sent.body).toEqual({ delivered: true, attempts: 1 });
    expect(app.tmux.typed(paneId).filter((k) => k === "Enter")).toHaveLength(1);
  });

  test("a prompt whose confirmation never comes is still not called delivered", async () => {
    const app = testApp();
    simulateAgents(app, { hook: false });
    const { id } = await idleSession(app);
    const sent = await post(app, `/v1/sessions/${id}/send`, { text: "say hello" });
    expect(sent.body).toMatchObject({ delivered: false, reason: "the agent never confirmed the prompt" });
  });

  test("hooks under a conversation id the agent changed (/clear) still reach the session by its secret", async () => {
    const app = testApp();
    simulateAgents(app);
    const { id } = await idleSession(app);
    const secret = app.repo.get(id)!.hookSecret;
    const response = await app.request("POST", "/v1/hooks/UserPromptSubmit", {
      body: { session_id: crypto.randomUUID(), hook_event_name: "UserPromptSubmit", prompt: "after clear" },
      headers: { "x-svc-hook-secret": secret },
    });
    expect(response.status).toBe(200);
    expect(app.repo.get(id)!.status).toBe("working");
    const stranger = await app.request("POST", "/v1/hooks/Stop", {
      body: { session_id: id, hook_event_name: "Stop" },
      headers: { "x-svc-hook-secret": "not-the-secret" },
    });
    expect(stranger.status).toBe(401);
    expect(app.repo.get(id)!.status).toBe("working");
  });
});

describe("approve, reject and answer answer the session as it is after the keys", () => {
  async function waiting(tool = "Write") {
    const app = testApp();
    simulateAgents(app);
    const { id, paneId } = await idleSession(app);
    await hook(app, id, "UserPromptSubmit", { prompt: "edit file", prompt_id: "e1" });
    await hook(app, id, "PermissionRequest", { tool_name: tool, tool_input: { file_path: "/w/hello.txt" } });
    expect(app.repo.get(id)!.status).toBe("permission_prompt");
    const get = async () => (await (await app.request("GET", `/v1/sessions/${id}`)).json()) as Json;
    return { app, id, paneId, get };
  }

  test("approve: the prompt cleared, working — what GET says right after", async () => {
    const { app, id, get } = await waiting();
    const approved = await post(app, `/v1/sessions/${id}/approve`);
    expect(approved.status).toBe(200);
    expect(approved.body).toMatchObject({ id, status: "working", pendingPermission: null });
    expect(await get()).toMatchObject({ status: "working", pendingPermission: null });
  });

  test("reject: the prompt cleared, idle (the turn ends)", async () => {
    const { app, id, get } = await waiting();
    const rejected = await post(app, `/v1/sessions/${id}/reject`);
    expect(rejected.body).toMatchObject({ id, status: "idle", pendingPermission: null });
    expect(await get()).toMatchObject({ status: "idle", pendingPermission: null });
  });

  test("a plan approved: working, the plan no longer pending", async () => {
    const { app, id } = await waiting("ExitPlanMode");
    expect(app.repo.get(id)!.pendingPermission).toMatchObject({ kind: "plan" });
    const approved = await post(app, `/v1/sessions/${id}/approve`);
    expect(approved.body).toMatchObject({ status: "working", pendingPermission: null });
  });

  test("answer to a question: working, nothing pending; the same session GET shows", async () => {
    const { app, id } = await asking();
    const answered = await post(app, `/v1/sessions/${id}/answer`, { text: "Green please" });
    expect(answered.body).toMatchObject({ id, status: "working", pendingPermission: null });
    const got = (await (await app.request("GET", `/v1/sessions/${id}`)).json()) as Json;
    expect(got).toEqual(answered.body);
  });

  test("two approvals of one dialog at once: one Enter; the second is refused (it would land on what comes next)", async () => {
    const { app, id, paneId } = await waiting();
    const [first, second] = await Promise.all([
      post(app, `/v1/sessions/${id}/approve`),
      post(app, `/v1/sessions/${id}/approve`),
    ]);
    expect([first.status, second.status].sort()).toEqual([200, 409]);
    expect([first, second].find((r) => r.status === 409)!.body.code).toBe("NO_PENDING_PERMISSION");
    expect(app.tmux.typed(paneId).filter((k) => k === "Enter")).toHaveLength(1);
  });
});

describe("an answer waits for its dialog to be drawn (keys pressed before it are lost)", () => {
  async function hookedNotDrawn() {
    const app = testApp();
    simulateAgents(app);
    const { id, paneId } = await idleSession(app);
    await hook(app, id, "UserPromptSubmit", { prompt: "run cmd: ls", prompt_id: "b1" });
    // The hook has come; the agent has not drawn its dialog yet.
    await postHook(app, id, "PermissionRequest", { tool_name: "Bash", tool_input: { command: "ls" } });
    expect(app.repo.get(id)!.status).toBe("permission_prompt");
    return { app, id, paneId, typed: () => app.tmux.typed(paneId) };
  }

  test("an approve that beats the draw presses Enter once the dialog is on screen, not before", async () => {
    const { app, id, paneId, typed } = await hookedNotDrawn();
    const before = typed().length;
    let done = false;
    const approving = post(app, `/v1/sessions/${id}/approve`).then((r) => {
      done = true;
      return r;
    });
    await Bun.sleep(300);
    expect(done).toBe(false);
    expect(typed().slice(before)).toEqual([]);
    app.tmux.setScreen(paneId, pane("06-permission-bash"));
    const approved = await approving;
    expect(approved.body).toMatchObject({ status: "working", pendingPermission: null });
    expect(typed().slice(before)).toEqual(["Enter"]);
  });

  test("a reject that beats the draw: Escape once drawn, and the dialog is not raised again", async () => {
    const { app, id, paneId, typed } = await hookedNotDrawn();
    const rejecting = post(app, `/v1/sessions/${id}/reject`);
    await Bun.sleep(100);
    app.tmux.setScreen(paneId, pane("06-permission-bash"));
    expect((await rejecting).body).toMatchObject({ status: "idle", pendingPermission: null });
    expect(typed().at(-1)).toBe("Escape");
    app.tmux.setScreen(paneId, pane("09-permission-rejected"));
    await Bun.sleep(50);
    expect(app.repo.get(id)).toMatchObject({ status: "idle", pendingPermission: null });
    expect(app.events.filter((e) => e.event === "status.permission")).toHaveLength(1);
  });

  test("a dialog the screen never shows is still answered, once the wait for it is over", async () => {
    const { app, id, typed } = await hookedNotDrawn();
    const approved = await post(app, `/v1/sessions/${id}/approve`);
    expect(approved.status).toBe(200);
    expect(typed().at(-1)).toBe("Enter");
  });
});
