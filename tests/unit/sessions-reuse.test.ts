import { describe, expect, test } from "bun:test";
import { testApp } from "../helpers/app.ts";
import { hook, idleSession, simulateAgents } from "../helpers/simulated-agent.ts";
import { until } from "../helpers/until.ts";

// biome-ignore lint/suspicious/noExplicitAny: response bodies are inspected field by field
type Json = Record<string, any>;

/**
 * Reuse is never a surprise (CONTRACT §10): an idle session in the workDir takes a create's
 * prompt only when the create allows it (`reuse` not false) and names no other session.
 */
async function world(name = "first") {
  const app = testApp();
  simulateAgents(app);
  const idle = await idleSession(app, { name });
  const workDir = app.repo.get(idle.id)!.workDir;
  const post = async (path: string, body: Json) => {
    const response = await app.request("POST", path, { body });
    return { status: response.status, body: (await response.json()) as Json };
  };
  /** The prompts pasted into a session's pane. */
  const pasted = (id: string) =>
    app.tmux
      .inputs(app.repo.get(id)!.paneId!)
      .filter((i) => i.kind === "paste")
      .map((i) => (i as { text: string }).text);
  return { app, id: idle.id, workDir, post, pasted };
}

describe("POST /v1/sessions and an idle session in the same workDir", () => {
  test("without reuse or name: reused (200, reused true), the prompt goes to it", async () => {
    const { id, workDir, post, pasted } = await world();
    const again = await post("/v1/sessions", { workDir, prompt: "more" });
    expect(again.status).toBe(200);
    expect(again.body).toMatchObject({
      id,
      reused: true,
      name: "first",
      promptDelivery: { delivered: true },
    });
    expect(pasted(id)).toEqual(["more"]);
  });

  test("reuse: true is the default behaviour", async () => {
    const { id, workDir, post } = await world();
    const again = await post("/v1/sessions", { workDir, reuse: true });
    expect([again.status, again.body.id, again.body.reused]).toEqual([200, id, true]);
  });

  test("reuse: false always starts a new session (201), twice in a row", async () => {
    const { app, id, workDir, post, pasted } = await world();
    const one = await post("/v1/sessions", { workDir, prompt: "one", reuse: false });
    expect(one.status).toBe(201);
    expect(one.body).toMatchObject({ reused: false, workDir });
    expect(one.body.id).not.toBe(id);
    await until(() => app.repo.get(one.body.id)?.status === "working");
    await hook(app, one.body.id, "Stop");
    await until(() => app.repo.get(one.body.id)?.status === "idle");
    // Two idle sessions now: reuse false still starts a third.
    const two = await post("/v1/sessions", { workDir, prompt: "two", reuse: false });
    expect(two.status).toBe(201);
    expect(new Set([id, one.body.id, two.body.id]).size).toBe(3);
    expect(pasted(id)).toEqual([]);
    expect(pasted(one.body.id)).toEqual(["one"]);
    expect(pasted(two.body.id)).toEqual(["two"]);
  });

  test("a different name is a new session; the idle one of another name is left alone", async () => {
    const { id, workDir, post, pasted } = await world("first");
    const other = await post("/v1/sessions", { workDir, name: "second", prompt: "hi" });
    expect(other.status).toBe(201);
    expect(other.body).toMatchObject({ reused: false, name: "second" });
    expect(other.body.id).not.toBe(id);
    expect(pasted(id)).toEqual([]);
  });

  test("the same name may reuse it", async () => {
    const { id, workDir, post } = await world("first");
    const same = await post("/v1/sessions", { workDir, name: "first", prompt: "hi" });
    expect(same.status).toBe(200);
    expect(same.body).toMatchObject({ id, reused: true, name: "first" });
  });

  test("a template's create follows the same rules (reuse false → new)", async () => {
    const { app, id, workDir, post } = await world();
    const template = await post("/v1/templates", { name: "t", workDir });
    expect(template.status).toBe(201);
    const reused = await post("/v1/sessions", { templateId: template.body.id });
    expect([reused.status, reused.body.id]).toEqual([200, id]);
    await until(() => app.repo.get(id)?.status === "idle");
    const fresh = await post("/v1/sessions", { templateId: template.body.id, reuse: false });
    expect(fresh.status).toBe(201);
    expect(fresh.body.id).not.toBe(id);
  });

  test("batch items: reuse false and another name each start a new session; a plain item reuses", async () => {
    const { id, workDir, post } = await world("first");
    const batch = await post("/v1/sessions/batch", {
      sessions: [
        { workDir, reuse: false },
        { workDir, name: "other" },
      ],
    });
    expect(batch.status).toBe(200);
    expect(batch.body.failed).toEqual([]);
    const created = batch.body.created as Json[];
    expect(created.map((s) => s.reused)).toEqual([false, false]);
    expect(created.map((s) => s.id)).not.toContain(id);
    expect(created[1]!.name).toBe("other");
    const plain = await post("/v1/sessions/batch", { sessions: [{ workDir, name: "first" }] });
    expect(plain.body.created[0]).toMatchObject({ id, reused: true });
  });

  test("reuse must be a boolean", async () => {
    const { workDir, post } = await world();
    const bad = await post("/v1/sessions", { workDir, reuse: "no" });
    expect([bad.status, bad.body.code]).toEqual([400, "VALIDATION_ERROR"]);
  });
});

test("the OpenAPI document describes reuse on create", async () => {
  const app = testApp();
  const doc = (await (await app.request("GET", "/v1/openapi.json")).json()) as Json;
  const create = doc.paths["/v1/sessions"].post;
  const schema = create.requestBody.content["application/json"].schema;
  expect(schema.properties.reuse).toMatchObject({ type: "boolean" });
  expect(schema.properties.reuse.description).toContain("false: always start a new session");
  expect(create.description).toContain("reuse: false");
});
