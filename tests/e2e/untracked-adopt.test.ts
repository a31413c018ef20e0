import { afterAll, beforeAll, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { type AgentWorld, startAgentWorld } from "../helpers/agent-world.ts";
import { compiledBinary, runAg } from "../helpers/binary.ts";
import { until } from "../helpers/until.ts";

// biome-ignore lint/suspicious/noExplicitAny: response bodies are inspected field by field
type Json = Record<string, any>;

/**
 * The state database removed under a running ag whose session runs the REAL Claude Code (through
 * the mock model), then a restart: the agent is reported untracked, `ag doctor --adopt-untracked`
 * gives it a record from its pane (agent, workDir, version, permission mode, hook secret), and
 * the adopted session is driven like any other: a prompt sent to it gets its answer, read back.
 */
let world: AgentWorld;

beforeAll(async () => {
  world = await startAgentWorld();
}, 60_000);
afterAll(async () => {
  await world?.stop();
});

test("database removed while running → restart → untracked agent reported → adopted → it takes a prompt and answers", async () => {
  const created = await world.api<Json>("POST", "/v1/sessions", {
    workDir: world.workDir,
    prompt: "say hello",
  });
  expect(created.status).toBe(201);
  const { id, agentVersion } = created.body;
  await world.waitFor(id, "idle", 60_000);

  rmSync(join(world.env.SVC_STATE_DIR!, "state.db"));
  await until(
    async () => (await world.api<Json>("GET", "/v1/health")).body.storage.code === "STORAGE_REPLACED",
  );
  await world.restart();
  expect((await world.api<Json[]>("GET", "/v1/sessions")).body).toEqual([]);
  const untracked = await world.api<Json>("GET", "/v1/untracked");
  expect(untracked.body.agents).toEqual([expect.objectContaining({ sessionId: id, dead: false })]);

  const doctor = await runAg(
    await compiledBinary(),
    ["doctor", "--adopt-untracked", "--port", String(world.ag.port)],
    { env: world.env },
  );
  expect(doctor.stdout).toContain(`adopted untracked agent ${id} as session`);
  expect(doctor.stdout).toContain("untracked agents: none");
  expect(doctor.stderr).not.toContain("warning:");

  // The record read from the pane: Claude Code, its version, the folder it runs in.
  const listed = (await world.api<Json[]>("GET", "/v1/sessions")).body;
  expect(listed).toEqual([
    expect.objectContaining({ id, agent: "claude", agentVersion, workDir: world.workDir, driver: "tmux" }),
  ]);
  await world.waitFor(id, "idle", 30_000);
  // What the conversation held before is history, still readable.
  expect((await world.api<Json>("GET", `/v1/sessions/${id}/read`)).body.output).toContain(
    "Hello from the mock model!",
  );

  const sent = await world.api("POST", `/v1/sessions/${id}/send`, { text: "after the adoption" });
  expect(sent.body).toEqual({ delivered: true, attempts: 1 });
  await until(async () => {
    const read = (await world.api<Json>("GET", `/v1/sessions/${id}/read`)).body;
    return read.status === "idle" && String(read.output).includes("Mock reply to: after the adoption");
  }, 60_000);
  const audit = (await world.api<Json[]>("GET", "/v1/audit")).body;
  expect(audit.find((a) => a.action === "session.untracked.adopt")).toMatchObject({
    target: id,
    outcome: "success",
  });
}, 180_000);
