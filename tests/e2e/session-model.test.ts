import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { type AgentWorld, startAgentWorld } from "../helpers/agent-world.ts";

// biome-ignore lint/suspicious/noExplicitAny: response bodies are inspected field by field
type Json = Record<string, any>;

/**
 * `model` on create reaches the model API through each REAL agent CLI (the compiled binary, the
 * mock model): in tmux Codex `--model`, Gemini CLI `--model`, OpenCode `--model provider/model`;
 * over ACP `gemini --acp --model` and OpenCode's session config. (Claude Code:
 * tests/e2e/cli.test.ts through `ag run --model`, and over ACP in acp-claude.test.ts.) One agent
 * at a time.
 */
let world: AgentWorld;

beforeAll(async () => {
  world = await startAgentWorld({}, { agents: ["codex", "gemini", "opencode"] });
}, 120_000);
afterAll(async () => {
  await world?.stop();
}, 30_000);

const CASES = [
  // [agent, driver, model asked for, the model the mock hears, the provider face it speaks]
  ["codex", "tmux", "gpt-5.1-codex-mini", "gpt-5.1-codex-mini", "openai-responses"],
  ["gemini", "tmux", "gemini-2.5-flash", "gemini-2.5-flash", "gemini"],
  ["gemini", "acp", "gemini-2.5-flash-lite", "gemini-2.5-flash-lite", "gemini"],
  // OpenCode names a model by its provider: the test world's provider "mock" (helpers/agents).
  ["opencode", "tmux", "mock/claude-haiku-4-5", "claude-haiku-4-5", "opencode"],
  // Over ACP through the session's opencode.json, over the user's own `model` (sonnet there).
  ["opencode", "acp", "mock/claude-haiku-4-5", "claude-haiku-4-5", "opencode"],
] as const;

describe("a session's model reaches the model API through each agent", () => {
  for (const [agent, driver, model, heard, face] of CASES) {
    test(`${agent} (${driver}): ${model}`, async () => {
      const dir = join(world.workDir, `model-${agent}-${driver}`);
      mkdirSync(dir, { recursive: true });
      const prompt = `say hello with a model chosen for ${agent} over ${driver}`;
      const created = await world.api<Json>("POST", "/v1/sessions", {
        agent,
        driver,
        workDir: dir,
        model,
        prompt,
      });
      expect([created.status, created.body.model, created.body.promptDelivery?.delivered]).toEqual([
        201,
        model,
        true,
      ]);
      await world.waitFor(created.body.id, "idle", 90_000);
      const asked = world.mock
        .requests()
        .filter((r) => r.face === face && r.kind === "main" && r.prompt?.includes(prompt));
      expect(asked.length).toBeGreaterThan(0);
      expect(new Set(asked.map((r) => r.model))).toEqual(new Set([heard]));
      expect((await world.api<Json>("DELETE", `/v1/sessions/${created.body.id}`)).status).toBe(200);
    }, 150_000);
  }
});
