import { describe, expect, test } from "bun:test";
import { agentAdapters, createAgentRegistry } from "../../src/agents/index.ts";
import { testApp } from "../helpers/app.ts";
import { idleSession, postHook, simulateAgents } from "../helpers/simulated-agent.ts";
import { tempDir } from "../helpers/temp.ts";

// biome-ignore lint/suspicious/noExplicitAny: response bodies are inspected field by field
type Json = Record<string, any>;

const create = async (app: ReturnType<typeof testApp>, body: Json) => {
  const response = await app.request("POST", "/v1/sessions", { body });
  return { status: response.status, body: (await response.json()) as Json };
};

describe("agents as a registry", () => {
  test("GET /v1/agents: each agent, whether its CLI answers, its drivers, capabilities and permission modes", async () => {
    const app = testApp({
      probe: async (command, flag) =>
        command === "claude" && flag === "--version" ? "2.1.197 (Claude Code)" : null,
      help: async (command) => (command === "claude" ? "  --session-id  --settings  --resume\n" : null),
    });
    await app.agents.probeClis();
    const agents = (await (await app.request("GET", "/v1/agents")).json()) as Json[];
    const claude = agents.find((a) => a.id === "claude")!;
    const verifiedVersions = [...app.agents.get("claude").verifiedVersions];
    expect(claude).toEqual({
      id: "claude",
      name: "Claude Code",
      installed: true,
      version: "2.1.197",
      verifiedVersions,
      verified: verifiedVersions.includes("2.1.197"),
      probe: {
        at: expect.any(String),
        flags: {
          "--session-id": true,
          "--settings": true,
          "--permission-mode": false,
          "--resume": true,
          "--fork-session": false,
        },
        missingFlags: ["--permission-mode", "--fork-session"],
        acp: true,
        hooks: false,
      },
      drivers: ["tmux", "acp"],
      capabilities: ["hooks", "transcript", "resume", "fork", "questions", "policy"],
      permissionModes: ["default", "bypassPermissions", "plan", "acceptEdits", "dontAsk", "auto"],
      command: "claude",
      package: "@anthropic-ai/claude-code",
      default: true,
    });
    for (const other of agents.filter((a) => a.id !== "claude")) {
      expect(other).toMatchObject({
        installed: false,
        version: null,
        verified: null,
        probe: null,
        default: false,
      });
    }
    expect(app.logs.filter((l) => l.includes("lacks flags"))).toHaveLength(1);
  });

  test("a session records the version of the CLI its launch ran, and whether it is verified", async () => {
    let version = "9.9.9 (Claude Code)";
    const app = testApp({ probe: async (command) => (command === "claude" ? version : null) });
    simulateAgents(app);
    const unverified = await create(app, { workDir: tempDir(), prompt: "hello", name: "odd" });
    expect(unverified.status).toBe(201);
    expect(unverified.body).toMatchObject({ agentVersion: "9.9.9", verified: false });
    expect(app.repo.get(unverified.body.id)).toMatchObject({ agentVersion: "9.9.9", verified: false });
    const got = (await (await app.request("GET", `/v1/sessions/${unverified.body.id}`)).json()) as Json;
    expect(got).toMatchObject({ agentVersion: "9.9.9", verified: false });
    const verifiedVersions = app.agents.get("claude").verifiedVersions;
    const warnings = app.logs.filter((l) => l.includes("is not a verified version"));
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain(
      `session odd: claude 9.9.9 is not a verified version (verified: ${verifiedVersions.join(", ")}); running it anyway`,
    );
    version = `${verifiedVersions.at(-1)} (Claude Code)`;
    const verified = await create(app, { workDir: tempDir(), reuse: false });
    expect(verified.body).toMatchObject({ agentVersion: verifiedVersions.at(-1), verified: true });
    // A wrapper says nothing of its own: the CLI on the session's PATH is the one it runs.
    const wrapped = await create(app, { workDir: tempDir(), agentCommand: "my-wrapper --fast" });
    expect(wrapped.body).toMatchObject({ agentVersion: verifiedVersions.at(-1), verified: true });
    // No CLI to be found: unknown.
    version = "";
    const unknown = await create(app, { workDir: tempDir(), reuse: false });
    expect(unknown.body).toMatchObject({ agentVersion: null, verified: null });
    expect(app.logs.filter((l) => l.includes("is not a verified version"))).toHaveLength(1);
  });

  test("the live session drives the adapter for its recorded version", async () => {
    const asked: Array<string | null> = [];
    const app = testApp({
      probe: async (command) => (command === "claude" ? "2.1.500 (Claude Code)" : null),
    });
    const adapter = app.agents.get("claude");
    const original = adapter.forVersion;
    (adapter as { forVersion: typeof original }).forVersion = (version) => {
      asked.push(version);
      return original(version);
    };
    simulateAgents(app);
    const { body } = await create(app, { workDir: tempDir() });
    expect(body.agentVersion).toBe("2.1.500");
    expect(asked).toContain("2.1.500");
    expect(asked.every((v) => v === "2.1.500")).toBe(true);
  });

  test("a session records its agent and driver; none named is the default agent in tmux", async () => {
    const app = testApp();
    simulateAgents(app);
    const { status, body } = await create(app, { workDir: tempDir(), prompt: "hello" });
    expect(status).toBe(201);
    expect(body).toMatchObject({ agent: "claude", driver: "tmux" });
    expect(app.repo.get(body.id)).toMatchObject({ agent: "claude", driver: "tmux" });
    expect((await (await app.request("GET", `/v1/sessions/${body.id}`)).json()) as Json).toMatchObject({
      agent: "claude",
    });
  });

  test("an unknown agent is 400 UNKNOWN_AGENT, a driver it lacks 400 DRIVER_UNSUPPORTED; nothing starts", async () => {
    const app = testApp();
    simulateAgents(app);
    const unknown = await create(app, { workDir: tempDir(), agent: "nosuch" });
    expect(unknown.status).toBe(400);
    expect(unknown.body.code).toBe("UNKNOWN_AGENT");
    expect(unknown.body.error).toContain("claude");
    const acp = await create(app, { workDir: tempDir(), agent: "codex", driver: "acp" });
    expect([acp.status, acp.body.code]).toEqual([400, "DRIVER_UNSUPPORTED"]);
    const malformed = await create(app, { workDir: tempDir(), agent: "Not An Agent" });
    expect([malformed.status, malformed.body.code]).toEqual([400, "VALIDATION_ERROR"]);
    expect(app.tmux.server.windows.size).toBe(0);
    expect(app.repo.list()).toEqual([]);
  });

  test("a batch item's unknown agent fails that item only", async () => {
    const app = testApp();
    simulateAgents(app);
    const response = await app.request("POST", "/v1/sessions/batch", {
      body: {
        sessions: [
          { workDir: tempDir(), agent: "claude" },
          { workDir: tempDir(), agent: "nosuch" },
        ],
      },
    });
    const body = (await response.json()) as Json;
    expect(body.created.map((s: Json) => s.agent)).toEqual(["claude"]);
    expect(body.failed).toMatchObject([{ index: 1, code: "UNKNOWN_AGENT", statusCode: 400 }]);
  });

  test("a hook is its agent's: the session's own agent route and the pre-registry route take it, another agent's route does not", async () => {
    const app = testApp();
    simulateAgents(app);
    const { body } = await create(app, { workDir: tempDir() });
    const secret = app.repo.get(body.id)!.hookSecret;
    const post = (path: string, headers: Record<string, string>) =>
      app.request("POST", path, { body: { session_id: body.id }, headers });
    expect((await postHook(app, body.id, "Notification", { notification_type: "auth_success" })).status).toBe(
      200,
    );
    expect((await post("/v1/hooks/Notification", { "x-svc-hook-secret": secret })).status).toBe(200);
    const elsewhere = await post("/v1/hooks/codex/Notification", { "x-svc-hook-secret": secret });
    expect([elsewhere.status, ((await elsewhere.json()) as Json).code]).toEqual([401, "UNAUTHORIZED"]);
    // Without the secret nothing is told, not even whether the agent or the event exists.
    for (const path of ["/v1/hooks/nosuch/Stop", "/v1/hooks/claude/NoSuchEvent"]) {
      expect((await post(path, {})).status).toBe(401);
    }
    const unknownEvent = await post("/v1/hooks/claude/NoSuchEvent", { "x-svc-hook-secret": secret });
    expect(unknownEvent.status).toBe(404);
  });

  test("reuse takes an idle session of the same agent only", async () => {
    const app = testApp();
    simulateAgents(app);
    const idle = await idleSession(app, { name: "first" });
    const workDir = app.repo.get(idle.id)!.workDir;
    const again = await create(app, { workDir, prompt: "hello again", agent: "claude" });
    expect(again.body).toMatchObject({ reused: true, id: idle.id });
    // The stored agent decides: an idle session of another agent is never taken.
    const other = await idleSession(app, { name: "second" });
    app.db.run("UPDATE sessions SET agent = 'other' WHERE id = ?", [other.id]);
    const otherDir = app.repo.get(other.id)!.workDir;
    expect(app.repo.get(other.id)!.status).toBe("idle");
    const third = await create(app, { workDir: otherDir, prompt: "hello there", agent: "claude" });
    expect(third.body.reused).toBe(false);
  });
});

describe("an agent that is not installed", () => {
  test("notInstalled: the CLI's install hint, or the agentCommand's own program, looked up on the agent's PATH", () => {
    const looked: Array<[string, string | undefined]> = [];
    const registry = createAgentRegistry(agentAdapters(), {
      probe: async () => null,
      which: (program, path) => {
        looked.push([program, path]);
        return program === "sh" || program === "/opt/bin/claude" ? `/found/${program}` : null;
      },
    });
    expect(registry.notInstalled("opencode", { agentCommand: null, path: "/agent/bin" })).toBe(
      "the agent CLI not found (opencode); install it: npm install -g opencode-ai",
    );
    // The agentCommand's program is what runs: found, nothing is missing.
    expect(registry.notInstalled("claude", { agentCommand: "sh -c 'exec claude'" })).toBeNull();
    expect(registry.notInstalled("claude", { agentCommand: "/opt/bin/claude --debug" })).toBeNull();
    // Named as the agent's CLI, it is the CLI (and how to install it); another program is only named.
    expect(registry.notInstalled("claude", { agentCommand: "/usr/local/bin/claude" })).toBe(
      "the agent CLI not found (claude); install it: npm install -g @anthropic-ai/claude-code",
    );
    expect(registry.notInstalled("gemini", { agentCommand: "my-wrapper --acp" })).toBe(
      "my-wrapper (the session's agentCommand) is not found on the agent's PATH",
    );
    expect(looked[0]).toEqual(["opencode", "/agent/bin"]);
  });
});

describe("the agent of sessions ag's own features start", () => {
  test("a template names its agent; a create from it runs that agent, and an unknown one is refused", async () => {
    const app = testApp();
    simulateAgents(app);
    const workDir = tempDir();
    const named = await app.request("POST", "/v1/templates", {
      body: { name: "c", workDir, agent: "claude" },
    });
    const template = (await named.json()) as Json;
    expect(template.agent).toBe("claude");
    const session = await create(app, { templateId: template.id, prompt: "hello" });
    expect([session.status, session.body.agent]).toEqual([201, "claude"]);
    const bad = (await (
      await app.request("POST", "/v1/templates", { body: { name: "x", workDir, agent: "nosuch" } })
    ).json()) as Json;
    const refused = await create(app, { templateId: bad.id });
    expect([refused.status, refused.body.code]).toEqual([400, "UNKNOWN_AGENT"]);
  });

  test("a template copied from a session keeps its agent", async () => {
    const app = testApp();
    simulateAgents(app);
    const { body } = await create(app, { workDir: tempDir() });
    const copied = (await (
      await app.request("POST", "/v1/templates", { body: { name: "copy", sessionId: body.id } })
    ).json()) as Json;
    expect(copied.agent).toBe("claude");
  });
});
