import { afterAll, beforeAll, expect, test } from "bun:test";
import { type AgentWorld, startAgentWorld } from "../helpers/agent-world.ts";
import { saturateCores } from "../helpers/load.ts";

// biome-ignore lint/suspicious/noExplicitAny: response bodies are inspected field by field
type Json = Record<string, any>;

/**
 * The REAL Gemini CLI (0.61.0), resumed and forked with a core kept busy, each new life sent its
 * first prompt the moment ag reads it idle. The CLI draws its input box before it loads the
 * conversation, then hides it ("Resuming session...") and drops what was typed meanwhile: before
 * the fix, 2 of 6 such prompts were lost ("the agent never confirmed the prompt", ~58 s later).
 */
let world: AgentWorld;
let load: { stop(): Promise<void> } | null = null;

beforeAll(async () => {
  world = await startAgentWorld({}, { agents: ["gemini"] });
}, 60_000);
afterAll(async () => {
  await load?.stop();
  await world?.stop();
});

const mainRequests = () => world.mock.requests().filter((r) => r.face === "gemini" && r.kind === "main");

/** Sends `text` as soon as the session reads idle; the model gets it once, with the conversation. */
async function firstPrompt(id: string, text: string, history: string) {
  await world.waitFor(id, "idle", 60_000);
  const before = mainRequests().length;
  const sent = await world.api<Json>("POST", `/v1/sessions/${id}/send`, { text });
  expect(sent.body).toEqual({ delivered: true, attempts: 1 });
  await world.waitFor(id, "idle", 60_000);
  const prompts = mainRequests()
    .slice(before)
    .filter((r) => r.round === 0);
  expect(prompts.map((r) => r.prompt)).toEqual([text]);
  expect(prompts[0]!.history).toContain(history);
}

test("resumed and forked with a core busy: every first prompt arrives once", async () => {
  const created = await world.api<Json>("POST", "/v1/sessions", {
    agent: "gemini",
    workDir: world.workDir,
    prompt: "say hello",
  });
  expect(created.status).toBe(201);
  const id = created.body.id as string;
  await world.waitFor(id, "idle", 60_000);
  load = saturateCores(1, 600_000);
  for (let round = 1; round <= 3; round++) {
    expect((await world.api<Json>("DELETE", `/v1/sessions/${id}`)).body.status).toBe("killed");
    expect((await world.api<Json>("POST", `/v1/sessions/${id}/resume`)).status).toBe(200);
    await firstPrompt(id, `resumed ${round}`, "say hello");
  }
  for (let round = 1; round <= 2; round++) {
    const forked = await world.api<Json>("POST", `/v1/sessions/${id}/fork`);
    expect(forked.status).toBe(201);
    await firstPrompt(forked.body.id, `forked ${round}`, "resumed 3");
    expect((await world.api<Json>("DELETE", `/v1/sessions/${forked.body.id}`)).body.status).toBe("killed");
  }
}, 600_000);
