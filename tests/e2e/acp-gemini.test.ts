import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { acpAgentScenario } from "../helpers/acp-scenario.ts";
import { type AgentWorld, startAgentWorld } from "../helpers/agent-world.ts";

// biome-ignore lint/suspicious/noExplicitAny: response bodies are inspected field by field
type Json = Record<string, any>;

/**
 * A headless session (driver acp) on the REAL Gemini CLI (`gemini --acp`, 0.61.0) through the
 * compiled binary, against the mock model's Gemini face. The tests run in order on one session:
 * the scenario every ACP agent runs (tests/helpers/acp-scenario.ts), then Gemini's own.
 */
let world: AgentWorld;

beforeAll(async () => {
  world = await startAgentWorld({}, { agents: ["gemini"] });
}, 60_000);
afterAll(async () => {
  await world?.stop();
});

describe("a Gemini CLI session over ACP", () => {
  const { id, send, reach, turns } = acpAgentScenario({
    agent: "gemini",
    face: "gemini",
    world: () => world,
    created(idle) {
      // Gemini reports a turn's tokens in the prompt response's _meta.quota.
      expect(idle.tokenUsage.input).toBeGreaterThan(0);
      expect(idle.tokenUsage.output).toBeGreaterThan(0);
    },
    permission(pending) {
      expect(pending.options.map((o: Json) => o.description)).toContain("allow_once");
      expect(pending.toolInput).toBeDefined();
    },
  });
  const geminiPrompts = () => turns().map((r) => r.prompt);

  test("kill ends the session and its agent", async () => {
    const created = await world.api<Json>("POST", "/v1/sessions", {
      agent: "gemini",
      driver: "acp",
      workDir: world.workDir,
      reuse: false,
    });
    expect(created.status).toBe(201);
    const killed = await world.api<Json>("DELETE", `/v1/sessions/${created.body.id}`);
    expect(killed.status).toBe(200);
    expect(killed.body.status).toBe("killed");
  }, 60_000);

  /**
   * Gemini CLI 0.61.0's session/load cannot find a conversation within the UTC minute the
   * conversation's file is named after (it appends a fresh recording to that very file first):
   * ag names the file after the minute before (docs/drivers.md, Restart). So a restart right
   * after the session began reopens it at once: the transcript kept with ag's note after it, the
   * model given the earlier conversation.
   */
  test("ag restarted while the session is idle: reopened by session/load, the conversation kept", async () => {
    const before = (await world.api<Json>("GET", `/v1/sessions/${id()}/transcript/cursor?limit=200`)).body;
    const earlier = turns().at(-1)?.history ?? [];
    expect(earlier).toContain("say hello");
    await world.restart();
    const page = async () =>
      (await world.api<Json>("GET", `/v1/sessions/${id()}/transcript/cursor?limit=200`)).body
        .messages as Json[];
    let messages: Json[] = [];
    for (const deadline = Date.now() + 120_000; Date.now() < deadline; await Bun.sleep(200)) {
      expect((await world.api<Json>("GET", `/v1/sessions/${id()}`)).body.status).not.toBe("crashed");
      messages = await page();
      if (messages.some((m) => m.subtype === "reopened")) break;
    }
    expect(messages.slice(0, before.messages.length)).toEqual(before.messages);
    expect(messages.slice(before.messages.length)).toMatchObject([{ role: "system", subtype: "reopened" }]);
    await reach("idle");
    expect(await send("what did I say first?")).toEqual({ delivered: true, attempts: 1 });
    await reach("idle");
    expect(geminiPrompts().at(-1)).toBe("what did I say first?");
    expect(turns().at(-1)?.history).toEqual([...earlier, "what did I say first?"]);
  }, 180_000);
});
