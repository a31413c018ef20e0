import { describe, expect, test } from "bun:test";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { AgentEnvironment, LaunchRequest } from "../../src/agents/agent.ts";
import { createClaudeAdapter } from "../../src/agents/claude/adapter.ts";
import { createCodexAdapter } from "../../src/agents/codex/adapter.ts";
import { createGeminiAdapter } from "../../src/agents/gemini/adapter.ts";
import { createOpenCodeAdapter } from "../../src/agents/opencode/adapter.ts";
import { createInput } from "../../src/cli/commands/create.ts";
import { testApp } from "../helpers/app.ts";
import { idleSession, simulateAgents } from "../helpers/simulated-agent.ts";
import { tempDir } from "../helpers/temp.ts";

// biome-ignore lint/suspicious/noExplicitAny: response bodies are inspected field by field
type Json = Record<string, any>;

/**
 * A session's model (`model` on create): checked as one argument of a launch line, stored,
 * shown in the session object, and passed to each agent the way that agent takes one.
 */

function environment(): AgentEnvironment {
  const home = tempDir("ag-model-home-");
  // Gemini CLI copies the user's own files into its per-launch home: a login is enough.
  mkdirSync(join(home, ".gemini"), { recursive: true });
  writeFileSync(join(home, ".gemini", "oauth_creds.json"), "{}");
  return { home, dataDir: null, trustWorkdir: false, selfCommand: ["/opt/ag/ag"], isRoot: false };
}

function request(model: string | null, overrides: Partial<LaunchRequest> = {}): LaunchRequest {
  return {
    sessionId: "0b5e55ed-0000-4000-8000-00000000aaaa",
    workDir: tempDir("ag-model-work-"),
    permissionMode: "default",
    model,
    agentCommand: null,
    sessionDir: join(tempDir("ag-model-state-"), "s"),
    hookUrl: "http://127.0.0.1:9100/v1/hooks/x",
    hookSecret: "secret-model",
    env: {},
    ...overrides,
  };
}

/** The value after `flag` in a command line, or undefined. */
const after = (command: string[], flag: string) => {
  const i = command.indexOf(flag);
  return i === -1 ? undefined : command[i + 1];
};

const ADAPTERS = [
  ["claude", createClaudeAdapter],
  ["codex", createCodexAdapter],
  ["gemini", createGeminiAdapter],
  ["opencode", createOpenCodeAdapter],
] as const;

describe("each agent's terminal launch takes the model as its --model", () => {
  for (const [name, create] of ADAPTERS) {
    test(name, async () => {
      const adapter = create(environment());
      const withModel = await adapter.prepareLaunch(request("model-x"));
      expect(after(withModel.command, "--model")).toBe("model-x");
      expect(withModel.command.filter((a) => a === "--model")).toHaveLength(1);
      // No model: the agent's own default, so no flag at all.
      const without = await adapter.prepareLaunch(request(null));
      expect(without.command).not.toContain("--model");
    });
  }
});

describe("each agent's ACP launch takes the model its own way", () => {
  test("Claude Code's adapter: over the protocol (session/set_model), not on its command line", async () => {
    const acp = createClaudeAdapter(environment()).acp!;
    expect(acp.protocolModel).toBe(true);
    const plan = await acp.prepare(request("opus", { agentCommand: "claude-code-acp" }));
    expect(plan.command).toEqual(["claude-code-acp"]);
    expect(plan.env.ANTHROPIC_MODEL).toBeUndefined();
  });

  test("Gemini CLI: gemini --acp --model", async () => {
    const plan = await createGeminiAdapter(environment()).acp!.prepare(request("gemini-2.5-pro"));
    expect(plan.command.slice(0, 4)).toEqual(["gemini", "--acp", "--model", "gemini-2.5-pro"]);
  });

  test("OpenCode: `opencode acp` has no --model, so the session's opencode.json names it", async () => {
    const acp = createOpenCodeAdapter(environment()).acp!;
    const plan = await acp.prepare(request("anthropic/claude-sonnet-4"));
    expect(plan.command).toEqual(["opencode", "acp"]);
    const config = JSON.parse(readFileSync(join(plan.env.OPENCODE_CONFIG_DIR!, "opencode.json"), "utf8"));
    expect(config.model).toBe("anthropic/claude-sonnet-4");
    const without = await acp.prepare(request(null));
    const plain = JSON.parse(readFileSync(join(without.env.OPENCODE_CONFIG_DIR!, "opencode.json"), "utf8"));
    expect(plain.model).toBeUndefined();
  });
});

describe("POST /v1/sessions with a model", () => {
  async function world() {
    const app = testApp();
    simulateAgents(app);
    const post = async (body: Json) => {
      const response = await app.request("POST", "/v1/sessions", { body: { workDir: tempDir(), ...body } });
      return { status: response.status, body: (await response.json()) as Json };
    };
    return { app, post };
  }

  test("stored, shown in the session object, and on the agent's command line", async () => {
    const { app, post } = await world();
    const created = await post({ model: "claude-opus-4-1[1m]", permissionMode: "plan" });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ model: "claude-opus-4-1[1m]", permissionMode: "plan" });
    const read = await app.request("GET", `/v1/sessions/${created.body.id}`);
    expect(((await read.json()) as Json).model).toBe("claude-opus-4-1[1m]");
    const window = [...app.tmux.server.windows.values()].find((w) => w.cwd === created.body.workDir)!;
    expect(after(window.command, "--model")).toBe("claude-opus-4-1[1m]");
    expect(after(window.command, "--permission-mode")).toBe("plan");
  });

  test("without one: null, and no --model", async () => {
    const { app, post } = await world();
    const created = await post({});
    expect(created.body.model).toBeNull();
    const window = [...app.tmux.server.windows.values()].find((w) => w.cwd === created.body.workDir)!;
    expect(window.command).not.toContain("--model");
  });

  test("a model that is not one argument is refused (400), nothing starts", async () => {
    const { app, post } = await world();
    for (const model of ["--dangerously-skip-permissions", "opus 4", "", "x".repeat(129)]) {
      const refused = await post({ model });
      expect([refused.status, refused.body.code]).toEqual([400, "VALIDATION_ERROR"]);
    }
    expect(app.tmux.server.windows.size).toBe(0);
  });

  test("a template's model is the session's unless the create names another", async () => {
    const { post, app } = await world();
    const response = await app.request("POST", "/v1/templates", {
      body: { name: "fast", workDir: tempDir(), model: "haiku" },
    });
    const template = (await response.json()) as Json;
    expect([response.status, template.model]).toEqual([201, "haiku"]);
    expect((await post({ templateId: template.id, reuse: false })).body.model).toBe("haiku");
    expect((await post({ templateId: template.id, reuse: false, model: "opus" })).body.model).toBe("opus");
  });

  test("an idle session with another model is not reused; one with the same model is", async () => {
    const { app } = await world();
    const idle = await idleSession(app, { model: "sonnet" });
    const workDir = app.repo.get(idle.id)!.workDir;
    const post = async (body: Json) =>
      (await (await app.request("POST", "/v1/sessions", { body: { workDir, ...body } })).json()) as Json;
    expect(await post({ model: "sonnet" })).toMatchObject({ id: idle.id, reused: true });
    const other = await post({ model: "opus" });
    expect(other).toMatchObject({ reused: false, model: "opus" });
    expect(other.id).not.toBe(idle.id);
  });
});

describe("ag run / ag create flags", () => {
  test("--permission-mode and --model go into the create request", () => {
    const input = createInput({ cwd: "/tmp", "permission-mode": "plan", model: "opus" }, "hi");
    expect(input).toMatchObject({ workDir: "/tmp", prompt: "hi", permissionMode: "plan", model: "opus" });
    expect(createInput({ cwd: "/tmp" }, "hi")).toEqual({ workDir: "/tmp", prompt: "hi" });
  });

  test("a permission mode the API does not have is a usage error naming the ones it has", () => {
    expect(() => createInput({ "permission-mode": "yolo" }, "hi")).toThrow(
      "--permission-mode is one of default, bypassPermissions, plan, acceptEdits, dontAsk, auto, not yolo",
    );
    expect(() => createInput({ model: "  " }, "hi")).toThrow("--model needs a model name");
    // One code for a flag's value the API has no such thing for, as for every usage error.
    for (const bad of [{ "permission-mode": "yolo" }, { driver: "screen" }, { model: "" }]) {
      try {
        createInput(bad, "hi");
        throw new Error("not refused");
      } catch (error) {
        expect((error as { code?: string }).code).toBe("USAGE_ERROR");
      }
    }
  });
});
