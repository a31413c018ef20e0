import { afterAll, describe, expect, test } from "bun:test";
import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { tempDir } from "../helpers/temp.ts";

/**
 * ag's OpenCode plugin (src/agents/opencode/plugin.js) as OpenCode runs it: the file in a
 * config dir's plugin/ folder beside its settings, its factory called, then its hooks and event
 * handler fed what OpenCode 1.18.33 gives them (shapes from the captured fixtures). ag is a
 * local server that records the hooks and refuses a tool when asked to.
 */

type Hook = { plugin: string; event: string; secret: string | null; body: Record<string, unknown> };
const received: Hook[] = [];
let refuse = false;
const ag = Bun.serve({
  port: 0,
  hostname: "127.0.0.1",
  async fetch(request) {
    // /<plugin>/v1/hooks/opencode/<event>: each loaded plugin's hooks told apart (they are sent
    // without waiting, so one test's last hooks may arrive during the next).
    const path = new URL(request.url).pathname.split("/");
    const event = path.at(-1)!;
    received.push({
      plugin: path[1]!,
      event,
      secret: request.headers.get("X-Svc-Hook-Secret"),
      body: await request.json(),
    });
    if (event === "tool.execute.before" && refuse)
      return Response.json({ decision: "deny", reason: "not here" });
    return Response.json({});
  },
});
afterAll(() => ag.stop(true));

const PLUGIN = join(import.meta.dir, "..", "..", "src", "agents", "opencode", "plugin.js");

type Hooks = {
  event(input: { event: Record<string, unknown> }): Promise<void>;
  "chat.message"(input: Record<string, unknown>, output: Record<string, unknown>): Promise<void>;
  "tool.execute.before"(input: Record<string, unknown>, output: Record<string, unknown>): Promise<void>;
  "tool.execute.after"(input: Record<string, unknown>, output: Record<string, unknown>): Promise<void>;
};

let loaded = 0;

/** A config dir of its own (a module of its own: the plugin keeps its state per module). */
async function loadPlugin(hookUrl?: string) {
  const plugin = `p${++loaded}`;
  hookUrl ??= `http://127.0.0.1:${ag.port}/${plugin}/v1/hooks/opencode`;
  const dir = tempDir("ag-oc-plugin-");
  mkdirSync(join(dir, "config", "plugin"), { recursive: true });
  copyFileSync(PLUGIN, join(dir, "config", "plugin", "ag.js"));
  writeFileSync(join(dir, "secret"), "s3cret\n", { mode: 0o600 });
  const conversationFile = join(dir, "conversation.jsonl");
  writeFileSync(
    join(dir, "config", "ag.json"),
    JSON.stringify({
      hookUrl,
      secretHeader: "X-Svc-Hook-Secret",
      secretFile: join(dir, "secret"),
      conversationFile,
    }),
  );
  const module = await import(join(dir, "config", "plugin", "ag.js"));
  const exported = Object.values(module);
  expect(exported.length).toBe(1); // OpenCode calls every export as a plugin
  const factory = exported[0] as (ctx: unknown) => Promise<Hooks>;
  const hooks = await factory({});
  expect(await factory({})).toBe(hooks); // called twice per start by OpenCode: one state
  const lines = () =>
    readFileSync(conversationFile, "utf8")
      .split("\n")
      .filter(Boolean)
      .map((l) => JSON.parse(l));
  /** This plugin's hooks, once `count` of them have arrived (1 s at most). */
  const sent = async (count: number) => {
    const mine = () => received.filter((h) => h.plugin === plugin);
    for (let i = 0; i < 100 && mine().length < count; i++) await Bun.sleep(10);
    return mine();
  };
  return { hooks, lines, conversationFile, sent };
}

const SES = "ses_main";
const event = (type: string, properties: Record<string, unknown>, id = `evt_${Math.random()}`) => ({
  event: { id, type, properties },
});
const userMessage = (id: string, created = Date.now()) =>
  event("message.updated", { sessionID: SES, info: { id, role: "user", sessionID: SES, time: { created } } });
const assistantMessage = (id: string, extra: Record<string, unknown> = {}) =>
  event("message.updated", {
    sessionID: SES,
    info: {
      id,
      role: "assistant",
      sessionID: SES,
      modelID: "claude-sonnet-4-5",
      time: { created: Date.now() },
      ...extra,
    },
  });
const part = (p: Record<string, unknown>) =>
  event("message.part.updated", { sessionID: SES, part: { sessionID: SES, ...p } });

describe("ag's OpenCode plugin", () => {
  test("a turn: prompt, answer, usage and its end are written once each, in order", async () => {
    const { hooks, lines } = await loadPlugin();
    await hooks.event(event("session.created", { sessionID: SES, info: { id: SES } }));
    await hooks.event(userMessage("msg_u1"));
    // A user text part arrives once; an assistant's is written empty, then again finished.
    await hooks.event(part({ id: "prt_u1", messageID: "msg_u1", type: "text", text: "say hello" }));
    await hooks.event(assistantMessage("msg_a1"));
    for (const time of [{ start: 1 }, { start: 1, end: 2 }, { start: 1, end: 2 }])
      await hooks.event(
        part({ id: "prt_a1", messageID: "msg_a1", type: "text", text: time.end ? "Hello!" : "", time }),
      );
    const tokens = { input: 26, output: 8, reasoning: 2, cache: { read: 7953, write: 5 } };
    await hooks.event(
      part({ id: "prt_s1", messageID: "msg_a1", type: "step-finish", reason: "stop", tokens }),
    );
    await hooks.event(event("session.idle", { sessionID: SES }, "evt_idle"));
    expect(lines().map((l) => [l.type ?? `${l.role}:${l.kind}`, l.id])).toEqual([
      ["session", `session:${SES}`],
      ["user:prompt", "prt_u1"],
      ["assistant:text", "prt_a1"],
      ["usage", "prt_s1"],
      ["system:system", "idle:evt_idle"],
    ]);
    expect(lines()[2]).toMatchObject({ text: "Hello!", model: "claude-sonnet-4-5", message: "msg_a1" });
    // Reasoning tokens are output tokens (billed so); cache writes are cache creation.
    expect(lines()[3].tokens).toEqual({ input: 26, output: 10, cacheRead: 7953, cacheCreation: 5 });
  });

  test("tools: the call once running, its result once finished; an error is a result with isError", async () => {
    const { hooks, lines } = await loadPlugin();
    await hooks.event(assistantMessage("msg_a"));
    const tool = { id: "prt_t", messageID: "msg_a", type: "tool", tool: "bash", callID: "toolu_1" };
    await hooks.event(part({ ...tool, state: { status: "pending", input: {} } }));
    await hooks.event(part({ ...tool, state: { status: "running", input: { command: "ls" } } }));
    await hooks.event(
      part({ ...tool, state: { status: "completed", input: { command: "ls" }, output: "a\nb\n" } }),
    );
    const write = { id: "prt_w", messageID: "msg_a", type: "tool", tool: "write", callID: "toolu_2" };
    await hooks.event(
      part({ ...write, state: { status: "error", input: { filePath: "/w/x" }, error: "rejected" } }),
    );
    expect(lines().map((l) => [l.kind, l.tool, l.input ?? l.text, l.isError ?? null])).toEqual([
      ["tool_use", "bash", { command: "ls" }, null],
      ["tool_result", "bash", "a\nb\n", false],
      ["tool_use", "write", { filePath: "/w/x" }, null],
      ["tool_result", "write", "rejected", true],
    ]);
  });

  test("errors: an API error and an interrupt are lines; only the API error is forwarded", async () => {
    const { hooks, lines, sent } = await loadPlugin();
    const apiError = { name: "APIError", data: { message: "Invalid request (mock)", statusCode: 400 } };
    await hooks.event(assistantMessage("msg_e", { error: apiError }));
    await hooks.event(
      assistantMessage("msg_i", { error: { name: "MessageAbortedError", data: { message: "Aborted" } } }),
    );
    await hooks.event(event("session.error", { sessionID: SES, error: apiError }));
    await hooks.event(event("session.error", { sessionID: SES, error: { name: "MessageAbortedError" } }));
    await hooks.event(event("session.idle", { sessionID: SES }));
    expect(lines().map((l) => [l.role, l.kind, l.text])).toEqual([
      ["assistant", "api_error", "Invalid request (mock)"],
      ["user", "interrupt", "Interrupted"],
      ["system", "system", undefined],
    ]);
    expect((await sent(2)).map((h) => h.event)).toEqual(["session.error", "session.idle"]);
  });

  test("hooks go out in order with the secret, the conversation file and what the dialogs are about", async () => {
    const { hooks, conversationFile, sent } = await loadPlugin();
    await hooks["chat.message"](
      { sessionID: SES, agent: "build" },
      {
        message: { id: "msg_u" },
        parts: [
          { type: "text", text: "run cmd: ls" },
          { type: "text", text: "a file's content", synthetic: true },
        ],
      },
    );
    await hooks["tool.execute.before"](
      { tool: "bash", sessionID: SES, callID: "toolu_9" },
      { args: { command: "ls" } },
    );
    await hooks.event(
      event("permission.asked", {
        id: "per_1",
        sessionID: SES,
        permission: "bash",
        metadata: { command: "ls" },
        tool: { messageID: "msg_a", callID: "toolu_9" },
      }),
    );
    await hooks.event(event("permission.replied", { sessionID: SES, requestID: "per_1", reply: "once" }));
    await hooks.event(
      event("permission.asked", {
        id: "per_2",
        sessionID: SES,
        permission: "bash",
        tool: { callID: "toolu_9" },
      }),
    );
    await hooks.event(event("permission.replied", { sessionID: SES, requestID: "per_2", reply: "reject" }));
    await hooks["tool.execute.after"](
      { tool: "bash", sessionID: SES, callID: "toolu_9", args: {} },
      { output: "" },
    );
    await hooks.event(event("session.status", { sessionID: SES, status: { type: "idle" } }));
    await hooks.event(event("session.idle", { sessionID: SES }));
    const forwarded = await sent(7);
    expect(forwarded.map((h) => h.event)).toEqual([
      "chat.message",
      "tool.execute.before",
      "permission.asked",
      "permission.replied",
      "permission.asked",
      "tool.execute.after",
      "session.idle",
    ]);
    expect(forwarded.every((h) => h.secret === "s3cret" && h.body.transcriptPath === conversationFile)).toBe(
      true,
    );
    expect(forwarded[0]!.body).toMatchObject({ text: "run cmd: ls", messageID: "msg_u", sessionID: SES });
    expect(forwarded[2]!.body).toMatchObject({ toolName: "bash", metadata: { command: "ls" } });
    expect(forwarded[3]!.body).toMatchObject({ reply: "once", toolName: "bash", callID: "toolu_9" });
  });

  test("ag's refusal before a tool is thrown (OpenCode denies the tool); no answer lets it run", async () => {
    const { hooks } = await loadPlugin();
    refuse = true;
    const run = () =>
      hooks["tool.execute.before"]({ tool: "bash", sessionID: SES, callID: "c" }, { args: {} });
    await expect(run()).rejects.toThrow("not here");
    refuse = false;
    await run();
    // ag away: no decision, the tool runs.
    const away = await loadPlugin("http://127.0.0.1:9/v1/hooks/opencode");
    await away.hooks["tool.execute.before"]({ tool: "bash", sessionID: SES, callID: "c" }, { args: {} });
  });

  test("a fork's copies are marked copied; a sub-agent's lines and hooks are marked as its", async () => {
    const { hooks, lines, sent } = await loadPlugin();
    await hooks.event(userMessage("msg_old", Date.now() - 60_000));
    await hooks.event(part({ id: "prt_old", messageID: "msg_old", type: "text", text: "an old prompt" }));
    const child = "ses_child";
    await hooks.event(event("session.created", { sessionID: child, info: { id: child, parentID: SES } }));
    await hooks.event(event("session.idle", { sessionID: child }));
    expect(lines().map((l) => [l.type ?? l.kind, l.copied ?? false, l.sidechain ?? false])).toEqual([
      ["prompt", true, false],
      ["session", false, true],
      ["system", false, true],
    ]);
    expect((await sent(1))[0]!.body).toMatchObject({ sessionID: child, parentID: SES });
  });
});
