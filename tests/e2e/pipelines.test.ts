import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { type AgentWorld, startAgentWorld } from "../helpers/agent-world.ts";

// biome-ignore lint/suspicious/noExplicitAny: response bodies are inspected field by field
type Json = Record<string, any>;

/** Pipelines on the REAL agent CLI (one stage session at a time), through the compiled binary. */
let world: AgentWorld;
beforeAll(async () => {
  world = await startAgentWorld();
}, 60_000);
afterAll(async () => {
  await world?.stop();
});

async function until(id: string, statuses: string[], ms = 60_000): Promise<Json> {
  const deadline = Date.now() + ms;
  for (;;) {
    const { body } = await world.api<Json>("GET", `/v1/pipelines/${id}`);
    if (statuses.includes(body.status)) return body;
    if (Date.now() > deadline) throw new Error(`pipeline still ${body.status}: ${JSON.stringify(body)}`);
    await Bun.sleep(200);
  }
}

describe("pipelines on the real agent CLI", () => {
  test("two stages run in order in fresh sessions; the second gets the first's output", async () => {
    const created = await world.api<Json>("POST", "/v1/pipelines", {
      name: "greet",
      workDir: world.workDir,
      stages: [{ name: "hello", prompt: "say hello" }, { prompt: "summarise that" }],
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      name: "greet",
      status: "running",
      stages: [
        { name: "hello", status: "running" },
        { name: "stage 2", status: "pending" },
      ],
    });
    const done = await until(created.body.id, ["completed", "failed"]);
    expect(done.status).toBe("completed");
    const [first, second] = done.stages;
    expect(first.output).toContain("Hello from the mock model!");
    expect(first.sessionId).not.toBe(second.sessionId);
    const prompts = world.prompts();
    expect(prompts.at(-2)).toBe("say hello");
    expect(prompts.at(-1)).toBe(`[Previous stage output]\n${first.output}\n\nsummarise that`);
    expect(second.output).toContain("Mock reply to: [Previous stage output]");
    // Each stage's session is closed when its stage ends.
    for (const stage of done.stages) {
      expect((await world.api<Json>("GET", `/v1/sessions/${stage.sessionId}`)).body.status).toBe("killed");
    }
    const list = await world.api<Json[]>("GET", "/v1/pipelines");
    expect(list.body.map((p) => p.id)).toContain(created.body.id);
  }, 90_000);

  test("DELETE cancels a running pipeline: its stage's session is closed, later stages never start", async () => {
    const created = await world.api<Json>("POST", "/v1/pipelines", {
      name: "slow",
      workDir: world.workDir,
      stages: [{ prompt: "slow 30" }, { prompt: "say hello" }],
    });
    const running = await until(created.body.id, ["running"]);
    const deadline = Date.now() + 30_000;
    let stage = running.stages[0];
    while (!stage.sessionId && Date.now() < deadline) {
      await Bun.sleep(100);
      stage = (await world.api<Json>("GET", `/v1/pipelines/${created.body.id}`)).body.stages[0];
    }
    const cancelled = await world.api<Json>("DELETE", `/v1/pipelines/${created.body.id}`);
    expect(cancelled.status).toBe(200);
    expect(cancelled.body).toMatchObject({
      status: "cancelled",
      stages: [{ status: "cancelled" }, { status: "cancelled", sessionId: null }],
    });
    expect((await world.api<Json>("GET", `/v1/sessions/${stage.sessionId}`)).body.status).toBe("killed");
    const again = await world.api<Json>("DELETE", `/v1/pipelines/${created.body.id}`);
    expect(again.body.code).toBe("CONFLICT");
  }, 90_000);

  test("bad input and unknown pipelines", async () => {
    expect((await world.api<Json>("GET", "/v1/pipelines/nope")).body.code).toBe("PIPELINE_NOT_FOUND");
    const empty = await world.api<Json>("POST", "/v1/pipelines", {
      name: "x",
      workDir: world.workDir,
      stages: [],
    });
    expect(empty.status).toBe(400);
    const relative = await world.api<Json>("POST", "/v1/pipelines", {
      name: "x",
      workDir: "rel",
      stages: [{ prompt: "p" }],
    });
    expect(relative.body.code).toBe("INVALID_WORKDIR");
  });
});
