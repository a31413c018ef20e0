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
   * Gemini CLI 0.61.0 advertises loadSession, and its session/load mostly answers "No previous
   * sessions found for this project" for a conversation of an earlier process (also outside ag:
   * a bare client, the same HOME and cwd); once, on a loaded machine (CI with other real agents
   * running), it found the conversation and reopened it. Both ends are ag's to get right: reopened,
   * the transcript kept with ag's note after it and the session answering again; else crashed
   * (driver_restart), the transcript kept (docs/drivers.md).
   */
  test("ag restarted while the session is idle: reopened if Gemini finds its conversation, else crashed; the transcript kept either way", async () => {
    const before = (await world.api<Json>("GET", `/v1/sessions/${id()}/transcript/cursor?limit=200`)).body;
    await world.restart();
    const page = async () =>
      (await world.api<Json>("GET", `/v1/sessions/${id()}/transcript/cursor?limit=200`)).body
        .messages as Json[];
    let outcome: "crashed" | "reopened" | null = null;
    for (const deadline = Date.now() + 60_000; outcome === null && Date.now() < deadline; ) {
      const status = (await world.api<Json>("GET", `/v1/sessions/${id()}`)).body.status;
      if (status === "crashed") outcome = "crashed";
      else if ((await page()).some((m) => m.subtype === "reopened")) outcome = "reopened";
      else await Bun.sleep(200);
    }
    if (outcome === "crashed") {
      expect((await world.api<Json>("GET", `/v1/sessions/${id()}`)).body).toMatchObject({
        driver: "acp",
        endReason: "driver_restart",
      });
      expect(await page()).toEqual(before.messages);
      return;
    }
    expect(outcome).toBe("reopened");
    const messages = await page();
    expect(messages.slice(0, before.messages.length)).toEqual(before.messages);
    expect(messages.slice(before.messages.length)).toMatchObject([{ role: "system", subtype: "reopened" }]);
    await reach("idle");
    expect(await send("say hello")).toEqual({ delivered: true, attempts: 1 });
    await reach("idle");
    expect(geminiPrompts().at(-1)).toBe("say hello");
  }, 120_000);
});
