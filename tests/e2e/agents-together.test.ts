import { afterAll, beforeAll, expect, test } from "bun:test";
import { agentPackages } from "../../scripts/agent-tools.ts";
import { type AgentWorld, startAgentWorld } from "../helpers/agent-world.ts";

// biome-ignore lint/suspicious/noExplicitAny: response bodies are inspected field by field
type Json = Record<string, any>;

/**
 * Every agent ag can run, at once in one ag: each REAL CLI through the mock model, listed with its
 * agent, and all of them still followed after ag is killed and restarted. One session per agent.
 */
let world: AgentWorld;
const sessions = new Map<string, string>();

beforeAll(async () => {
  world = await startAgentWorld({}, { agents: Object.keys(agentPackages()) });
}, 60_000);
afterAll(async () => {
  await world?.stop();
});

test("every registered agent is installed in the test world", async () => {
  const agents = (await world.api<Json[]>("GET", "/v1/agents")).body;
  expect(agents.length).toBeGreaterThan(0);
  for (const agent of agents) expect([agent.id, agent.installed]).toEqual([agent.id, true]);
  for (const agent of agents) sessions.set(agent.id, "");
}, 30_000);

test("a session of each agent answers, and the list names each one's agent", async () => {
  for (const agent of sessions.keys()) {
    const created = await world.api<Json>("POST", "/v1/sessions", {
      workDir: world.workDir,
      agent,
      prompt: "say hello",
      reuse: false,
    });
    expect([agent, created.status, created.body.agent, created.body.promptDelivery]).toEqual([
      agent,
      201,
      agent,
      { delivered: true, attempts: 1 },
    ]);
    sessions.set(agent, created.body.id);
  }
  for (const [agent, id] of sessions) {
    await world.waitFor(id, "idle", 60_000);
    const read = await world.api<Json>("GET", `/v1/sessions/${id}/read`);
    expect([agent, read.body.output]).toEqual([agent, expect.stringContaining("Hello from the mock model!")]);
  }
  const listed = (await world.api<Json[]>("GET", "/v1/sessions?status=running")).body;
  expect(Object.fromEntries(listed.map((s) => [s.id, s.agent]))).toEqual(
    Object.fromEntries([...sessions].map(([agent, id]) => [id, agent])),
  );
}, 240_000);

test("ag killed and restarted: every agent's session is re-adopted and takes a prompt again", async () => {
  await world.restart("SIGKILL");
  expect(world.ag.stderr()).toContain(`re-adopted ${sessions.size} session(s)`);
  for (const [agent, id] of sessions) {
    const session = await world.waitFor(id, "idle", 30_000);
    expect([agent, session.agent]).toEqual([agent, agent]);
    const sent = await world.api<Json>("POST", `/v1/sessions/${id}/send`, { text: "say hello again" });
    expect([agent, sent.body]).toEqual([agent, { delivered: true, attempts: 1 }]);
    await world.waitFor(id, "idle", 60_000);
  }
  for (const id of sessions.values())
    expect((await world.api("DELETE", `/v1/sessions/${id}`)).status).toBe(200);
}, 300_000);
