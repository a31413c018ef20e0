import { expect, test } from "bun:test";
import { testApp } from "../helpers/app.ts";
import { simulateAgents } from "../helpers/simulated-agent.ts";
import { tempDir } from "../helpers/temp.ts";

// biome-ignore lint/suspicious/noExplicitAny: response bodies are inspected field by field
type Json = Record<string, any>;

test("spawn: a teammate in a new pane of the parent's window; its end is the parent's news", async () => {
  const app = testApp();
  simulateAgents(app);
  const parent = (await (
    await app.request("POST", "/v1/sessions", { body: { workDir: tempDir(), permissionMode: "acceptEdits" } })
  ).json()) as Json;
  await app.request("PUT", `/v1/sessions/${parent.id}/permission-profile`, { body: { profile: "readonly" } });
  const response = await app.request("POST", `/v1/sessions/${parent.id}/spawn`, {
    body: { prompt: "write the tests" },
  });
  expect(response.status).toBe(201);
  const child = (await response.json()) as Json;
  expect(child).toMatchObject({
    parentId: parent.id,
    workDir: parent.workDir,
    permissionMode: "acceptEdits",
    promptDelivery: { delivered: true, attempts: 1 },
    permissions: { profile: "readonly" },
  });
  const parentRecord = app.repo.get(parent.id)!;
  const childRecord = app.repo.get(child.id)!;
  expect(childRecord.windowId).toBe(parentRecord.windowId);
  expect(childRecord.paneId).not.toBe(parentRecord.paneId);
  const window = app.tmux.window(parentRecord.windowId!)!;
  expect(window.panes.map((p) => p.paneId)).toEqual([parentRecord.paneId!, childRecord.paneId!]);
  expect(app.events.find((e) => e.event === "swarm.teammate_spawned")?.meta.parentId).toBe(parent.id);

  // Killing the teammate closes its pane only; the parent keeps its window.
  await app.request("DELETE", `/v1/sessions/${child.id}`);
  expect(app.tmux.window(parentRecord.windowId!)!.panes.map((p) => p.paneId)).toEqual([parentRecord.paneId!]);
  expect(app.events.find((e) => e.event === "swarm.teammate_finished")?.meta).toMatchObject({
    parentId: parent.id,
    reason: "killed",
  });
  expect(app.repo.get(parent.id)!.status).not.toBe("killed");
});

test("killing a parent ends its teammates too; spawning from an unknown or ended session → 404", async () => {
  const app = testApp();
  simulateAgents(app);
  const parent = (await (
    await app.request("POST", "/v1/sessions", { body: { workDir: tempDir() } })
  ).json()) as Json;
  const child = (await (
    await app.request("POST", `/v1/sessions/${parent.id}/spawn`, { body: { prompt: "go" } })
  ).json()) as Json;
  await app.request("DELETE", `/v1/sessions/${parent.id}`);
  expect(app.repo.get(child.id)!.status).toBe("killed");
  expect(app.repo.get(parent.id)!.status).toBe("killed");
  expect(
    (await app.request("POST", `/v1/sessions/${parent.id}/spawn`, { body: { prompt: "x" } })).status,
  ).toBe(404);
  expect((await app.request("POST", "/sessions/nope/spawn", { body: { prompt: "x" } })).status).toBe(404);
  expect((await app.request("POST", `/v1/sessions/${parent.id}/spawn`, { body: {} })).status).toBe(400);
});
