import { describe, expect, test } from "bun:test";
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { LaunchRequest } from "../../src/agents/agent.ts";
import { createOpenCodeAdapter } from "../../src/agents/opencode/adapter.ts";
import { tempDir } from "../helpers/temp.ts";

const adapter = createOpenCodeAdapter({
  home: "",
  dataDir: null,
  trustWorkdir: false,
  selfCommand: [],
  isRoot: false,
});

function request(overrides: Partial<LaunchRequest> = {}): LaunchRequest {
  return {
    sessionId: "s-1",
    workDir: "/w",
    permissionMode: "default",
    agentCommand: null,
    sessionDir: join(tempDir("ag-oc-launch-"), "s-1"),
    hookUrl: "http://127.0.0.1:7777/v1/hooks/opencode",
    hookSecret: "secret-xyz",
    env: { EXTRA: "1" },
    ...overrides,
  };
}
const readJson = (path: string) => JSON.parse(readFileSync(path, "utf8"));

describe("launching OpenCode", () => {
  test("everything is the session's own: a config dir with rules, keys, the plugin and its settings", async () => {
    const req = request();
    const plan = await adapter.prepareLaunch(req);
    const config = join(req.sessionDir, "opencode");
    expect(plan.command).toEqual(["opencode"]);
    expect(plan.env).toEqual({ EXTRA: "1", OPENCODE_CONFIG_DIR: config, SVC_SESSION_ID: "s-1" });
    expect(readJson(join(config, "opencode.json"))).toEqual({
      agent: { build: { permission: { edit: "ask", bash: "ask" } }, plan: { permission: { bash: "ask" } } },
    });
    expect(readJson(join(config, "tui.json")).keybinds).toMatchObject({
      app_exit: "<leader>q",
      input_clear: "ctrl+c",
    });
    expect(readFileSync(join(config, "plugin", "ag.js"), "utf8")).toContain("export const AgPlugin");
    const settings = readJson(join(config, "ag.json"));
    expect(settings).toMatchObject({
      hookUrl: req.hookUrl,
      secretHeader: "X-Svc-Hook-Secret",
      conversationFile: join(req.sessionDir, "conversation.jsonl"),
    });
    // The secret is in a file of its own, never in the settings, argv or environment.
    expect(readFileSync(settings.secretFile, "utf8")).toBe("secret-xyz");
    expect(statSync(settings.secretFile).mode & 0o777).toBe(0o600);
    expect(JSON.stringify({ settings, plan })).not.toContain("secret-xyz");
    // Nothing for OpenCode to install from the registry into this dir.
    expect(readdirSync(join(config, "node_modules"))).toEqual([]);
    expect(readJson(join(config, "package-lock.json")).packages[""].dependencies).toHaveProperty(
      "@opencode-ai/plugin",
    );
  });

  test("permission modes: its own equivalents, and only those", async () => {
    expect([...adapter.permissionModes].sort()).toEqual([
      "acceptEdits",
      "bypassPermissions",
      "default",
      "plan",
    ]);
    const accept = request({ permissionMode: "acceptEdits" });
    await adapter.prepareLaunch(accept);
    expect(readJson(join(accept.sessionDir, "opencode", "opencode.json")).agent.build.permission).toEqual({
      edit: "allow",
      bash: "ask",
    });
    expect((await adapter.prepareLaunch(request({ permissionMode: "bypassPermissions" }))).command).toEqual([
      "opencode",
      "--auto",
    ]);
    const plan = request({ permissionMode: "plan" });
    expect((await adapter.prepareLaunch(plan)).command).toEqual(["opencode", "--agent", "plan"]);
    expect(readJson(join(plan.sessionDir, "opencode", "opencode.json")).agent.plan.permission).toEqual({
      bash: "ask",
    });
    await expect(adapter.prepareLaunch(request({ permissionMode: "dontAsk" }))).rejects.toThrow(
      "no dontAsk mode",
    );
  });

  test("an agent command of the user's replaces the program, quotes grouping words", async () => {
    const plan = await adapter.prepareLaunch(
      request({ agentCommand: `opencode -m "mock/claude-haiku-4-5"` }),
    );
    expect(plan.command).toEqual(["opencode", "-m", "mock/claude-haiku-4-5"]);
  });

  test("resume names OpenCode's own conversation, from the session's conversation file", async () => {
    const parent = request();
    await adapter.prepareLaunch(parent);
    const file = join(parent.sessionDir, "conversation.jsonl");
    await expect(
      adapter.prepareLaunch({ ...parent, resume: { conversationId: "s-1", fork: false } }),
    ).rejects.toThrow("no OpenCode conversation");
    const session = (id: string, parentId: string | null = null) =>
      JSON.stringify({ type: "session", session: id, parent: parentId, id: `session:${id}` });
    writeFileSync(
      file,
      [session("ses_first"), session("ses_sub", "ses_first"), session("ses_new"), "{torn"].join("\n"),
    );
    // Resume: the session's own file, the last main conversation in it.
    const resumed = await adapter.prepareLaunch({
      ...parent,
      resume: { conversationId: "s-1", fork: false },
    });
    expect(resumed.command).toEqual(["opencode", "-s", "ses_new"]);
  });

  test("the conversation file is found for a session launched here, once it exists", async () => {
    const req = request({ sessionId: "s-find" });
    await adapter.prepareLaunch(req);
    expect(await adapter.transcript.find("/w", "s-find")).toBeNull();
    writeFileSync(join(req.sessionDir, "conversation.jsonl"), "");
    expect(await adapter.transcript.find("/w", "s-find")).toBe(join(req.sessionDir, "conversation.jsonl"));
    expect(await adapter.transcript.find("/w", "never-launched")).toBeNull();
    expect(existsSync(req.sessionDir)).toBe(true);
  });
});

describe("OpenCode headless (its ACP entry)", () => {
  const acp = adapter.acp!;

  test("`opencode acp` with the session's own config dir: its rules, no plugin, keys or hook settings", async () => {
    expect(adapter.drivers).toEqual(["tmux", "acp"]);
    const req = request();
    const plan = await acp.prepare(req);
    const config = join(req.sessionDir, "opencode");
    expect(plan.command).toEqual(["opencode", "acp"]);
    expect(plan.env).toEqual({ EXTRA: "1", OPENCODE_CONFIG_DIR: config, SVC_SESSION_ID: "s-1" });
    expect(plan.approveAll).toBe(false);
    expect(readJson(join(config, "opencode.json"))).toEqual({
      agent: { build: { permission: { edit: "ask", bash: "ask" } }, plan: { permission: { bash: "ask" } } },
    });
    expect(readdirSync(config).sort()).toEqual(["node_modules", "opencode.json", "package-lock.json"]);
    expect(readdirSync(req.sessionDir)).toEqual(["opencode"]);
    expect(statSync(req.sessionDir).mode & 0o777).toBe(0o700);
    expect(JSON.stringify(plan)).not.toContain("secret-xyz");
  });

  test("permission modes: plan is the default agent, bypassPermissions is ag approving what asks", async () => {
    const plan = request({ permissionMode: "plan" });
    expect((await acp.prepare(plan)).command).toEqual(["opencode", "acp"]);
    expect(readJson(join(plan.sessionDir, "opencode", "opencode.json"))).toMatchObject({
      default_agent: "plan",
      agent: { plan: { permission: { bash: "ask" } } },
    });
    const bypass = request({ permissionMode: "bypassPermissions" });
    const bypassed = await acp.prepare(bypass);
    expect(bypassed.approveAll).toBe(true);
    expect(readJson(join(bypass.sessionDir, "opencode", "opencode.json"))).toEqual({ agent: {} });
    const accept = request({ permissionMode: "acceptEdits" });
    await acp.prepare(accept);
    expect(readJson(join(accept.sessionDir, "opencode", "opencode.json")).agent.build.permission).toEqual({
      edit: "allow",
      bash: "ask",
    });
    await expect(acp.prepare(request({ permissionMode: "dontAsk" }))).rejects.toThrow("no dontAsk mode");
  });

  test("an agent command of the user's replaces the program; `acp` follows it", async () => {
    const plan = await acp.prepare(request({ agentCommand: `/opt/oc/opencode --print-logs` }));
    expect(plan.command).toEqual(["/opt/oc/opencode", "--print-logs", "acp"]);
  });
});
