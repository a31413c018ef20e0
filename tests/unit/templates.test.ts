import { describe, expect, test } from "bun:test";
import { sampleSession, testApp } from "../helpers/app.ts";
import { simulateAgents } from "../helpers/simulated-agent.ts";
import { tempDir } from "../helpers/temp.ts";

// biome-ignore lint/suspicious/noExplicitAny: response bodies are inspected field by field
type Json = Record<string, any>;

async function call(app: ReturnType<typeof testApp>, method: string, path: string, body?: unknown) {
  const response = await app.request(method, path, { body });
  return { status: response.status, body: (await response.json()) as Json };
}

describe("templates CRUD", () => {
  test("create, read, list, update, delete", async () => {
    const app = testApp();
    const workDir = tempDir();
    const created = await call(app, "POST", "/v1/templates", {
      name: "reviewer",
      description: "reviews the diff",
      workDir,
      prompt: "review the diff",
      agentCommand: "claude --model opus",
      env: { REVIEW_DEPTH: "deep" },
      stallThresholdMs: 300_000,
      permissionMode: "plan",
      autoApprove: false,
      memoryKeys: ["project/style"],
    });
    expect(created.status).toBe(201);
    const { id } = created.body;
    expect(created.body).toMatchObject({
      name: "reviewer",
      workDir,
      envKeys: ["REVIEW_DEPTH"],
      memoryKeys: ["project/style"],
      permissionMode: "plan",
    });
    expect(created.body.createdAt).toBe(created.body.updatedAt);
    // Environment values may be secrets: never returned, only their names.
    expect(created.body.env).toBeUndefined();
    expect(JSON.stringify(created.body)).not.toContain("deep");
    expect((await call(app, "GET", `/v1/templates/${id}`)).body).toEqual(created.body);
    expect((await call(app, "GET", "/v1/templates")).body).toEqual([created.body]);

    const updated = await call(app, "PUT", `/v1/templates/${id}`, {
      prompt: "review harder",
      stallThresholdMs: 60_000,
    });
    expect(updated.status).toBe(200);
    expect(updated.body).toMatchObject({
      prompt: "review harder",
      stallThresholdMs: 60_000,
      name: "reviewer",
      workDir,
    });
    expect((await call(app, "GET", `/v1/templates/${id}`)).body.prompt).toBe("review harder");

    expect(await call(app, "DELETE", `/v1/templates/${id}`)).toEqual({
      status: 200,
      body: { id, deleted: true },
    });
    for (const [method, body] of [["GET"], ["PUT", { prompt: "x" }], ["DELETE"]] as const) {
      const missing = await call(app, method, `/v1/templates/${id}`, body);
      expect(missing).toMatchObject({ status: 404, body: { code: "TEMPLATE_NOT_FOUND", statusCode: 404 } });
    }
  });

  test("a template's prompt has a prompt's limits: 256 KiB (413) and no control characters (400)", async () => {
    const app = testApp();
    const workDir = tempDir();
    const big = await call(app, "POST", "/v1/templates", {
      name: "big",
      workDir,
      prompt: "x".repeat(256 * 1024 + 1),
    });
    expect(big).toMatchObject({ status: 413, body: { code: "PAYLOAD_TOO_LARGE" } });
    const bell = await call(app, "POST", "/v1/templates", { name: "bell", workDir, prompt: "ring\u0007" });
    expect(bell).toMatchObject({ status: 400, body: { code: "VALIDATION_ERROR" } });
    expect((await call(app, "GET", "/v1/templates")).body).toEqual([]);
  });

  test("a session's stall threshold below a second still copies (it is the configured value)", async () => {
    const app = testApp();
    const session = sampleSession({ workDir: tempDir(), stallThresholdMs: 500 });
    app.repo.insert(session);
    const copied = await call(app, "POST", "/v1/templates", { name: "fast", sessionId: session.id });
    expect(copied).toMatchObject({ status: 201, body: { stallThresholdMs: 500 } });
    expect((await call(app, "GET", "/v1/templates")).status).toBe(200);
  });

  test("names are unique: create and rename answer 409 CONFLICT, nothing changes", async () => {
    const app = testApp();
    const workDir = tempDir();
    const a = await call(app, "POST", "/v1/templates", { name: "a", workDir });
    const b = await call(app, "POST", "/v1/templates", { name: "b", workDir });
    const dup = await call(app, "POST", "/v1/templates", { name: "a", workDir });
    expect(dup).toMatchObject({
      status: 409,
      body: { code: "CONFLICT", error: 'a template named "a" already exists' },
    });
    const rename = await call(app, "PUT", `/v1/templates/${b.body.id}`, { name: "a", prompt: "changed" });
    expect(rename.status).toBe(409);
    expect((await call(app, "GET", `/v1/templates/${b.body.id}`)).body).toEqual(b.body);
    expect((await call(app, "GET", "/v1/templates")).body.map((t: Json) => t.id)).toEqual([
      a.body.id,
      b.body.id,
    ]);
  });

  test("sessionId copies workDir, stallThresholdMs, permissionMode and driver; given fields win", async () => {
    const app = testApp();
    const session = sampleSession({
      workDir: tempDir(),
      stallThresholdMs: 45_000,
      permissionMode: "acceptEdits",
      driver: "acp",
    });
    app.repo.insert(session);
    const copied = await call(app, "POST", "/v1/templates", { name: "copy", sessionId: session.id });
    expect(copied.status).toBe(201);
    expect(copied.body).toMatchObject({
      workDir: session.workDir,
      stallThresholdMs: 45_000,
      permissionMode: "acceptEdits",
      driver: "acp",
    });
    expect(copied.body.sessionId).toBeUndefined();
    const mixed = await call(app, "POST", "/v1/templates", {
      name: "mixed",
      sessionId: session.id,
      permissionMode: "plan",
    });
    expect(mixed.body).toMatchObject({ workDir: session.workDir, permissionMode: "plan" });
    const unknown = await call(app, "POST", "/v1/templates", { name: "x", sessionId: crypto.randomUUID() });
    expect(unknown.body.code).toBe("SESSION_NOT_FOUND");
  });

  test.each([
    [{ workDir: "/tmp" }, "body.name"],
    [{ name: "", workDir: "/tmp" }, "body.name"],
    [{ name: "x".repeat(129), workDir: "/tmp" }, "body.name"],
    [{ name: "n" }, "body.workDir: required unless sessionId is given"],
    [{ name: "n", workDir: "relative/dir" }, "workDir must be an absolute path"],
    [{ name: "n", workDir: "/no/such/dir/anywhere" }, "workDir does not exist"],
    [{ name: "n", workDir: "/tmp", permissionMode: "yolo" }, "body.permissionMode"],
    [{ name: "n", workDir: "/tmp", env: { "BAD-NAME": "v" } }, "body.env"],
    [{ name: "n", workDir: "/tmp", stallThresholdMs: 0 }, "body.stallThresholdMs"],
    [{ name: "n", workDir: "/tmp", memoryKeys: [""] }, "body.memoryKeys"],
    [{ name: "n", workDir: "/tmp", autoApprove: "yes" }, "body.autoApprove"],
  ])("%j is a 400 (%s) and stores nothing", async (body, message) => {
    const app = testApp();
    const answer = await call(app, "POST", "/v1/templates", body);
    expect(answer.status).toBe(400);
    expect(answer.body.error).toContain(message);
    expect((await call(app, "GET", "/v1/templates")).body).toEqual([]);
  });
});

describe("templateId on POST /v1/sessions", () => {
  async function create(app: ReturnType<typeof testApp>, body: Record<string, unknown>) {
    const response = await app.request("POST", "/v1/sessions", { body });
    return { status: response.status, body: (await response.json()) as Json };
  }

  test("the template supplies workDir, prompt, memory, env, stall threshold, mode; the request overrides", async () => {
    const app = testApp({ memory: { "project/style": "tabs" } });
    simulateAgents(app);
    const workDir = tempDir();
    const template = await call(app, "POST", "/v1/templates", {
      name: "t",
      workDir,
      prompt: "from the template",
      memoryKeys: ["project/style"],
      env: { A: "template", B: "template" },
      stallThresholdMs: 90_000,
      permissionMode: "plan",
    });
    const session = await create(app, { templateId: template.body.id, env: { B: "request" } });
    expect(session.status).toBe(201);
    expect(session.body).toMatchObject({ workDir, stallThresholdMs: 90_000, permissionMode: "plan" });
    expect(session.body.env).toBeUndefined(); // the environment is never returned
    const record = app.repo.get(session.body.id)!;
    expect(record.env).toEqual({ A: "template", B: "request" });
    const window = [...app.tmux.server.windows.values()].find((w) => w.tag === session.body.id)!;
    expect(window.env).toMatchObject({ A: "template", B: "request" });
    const paste = app.tmux.inputs(record.paneId!).find((i) => i.kind === "paste");
    expect(paste).toEqual({
      kind: "paste",
      text: "[Memory context]\nproject/style: tabs\n\nfrom the template",
    });

    const other = tempDir();
    const overridden = await create(app, {
      templateId: template.body.id,
      workDir: other,
      prompt: "from the request",
      memoryKeys: [],
      permissionMode: "default",
      stallThresholdMs: 10_000,
    });
    expect(overridden.body).toMatchObject({
      workDir: other,
      permissionMode: "default",
      stallThresholdMs: 10_000,
    });
    const pasted = app.tmux.inputs(app.repo.get(overridden.body.id)!.paneId!).find((i) => i.kind === "paste");
    expect(pasted).toEqual({ kind: "paste", text: "from the request" });
  });

  test("autoApprove launches with bypassPermissions unless a mode is given", async () => {
    const app = testApp();
    simulateAgents(app);
    const t = await call(app, "POST", "/v1/templates", {
      name: "auto",
      workDir: tempDir(),
      autoApprove: true,
    });
    expect((await create(app, { templateId: t.body.id })).body.permissionMode).toBe("bypassPermissions");
    const explicit = await create(app, {
      templateId: t.body.id,
      workDir: tempDir(),
      permissionMode: "acceptEdits",
    });
    expect(explicit.body.permissionMode).toBe("acceptEdits");
  });

  test("an unknown templateId is a 404, a create with neither workDir nor template a 400; no window opens", async () => {
    const app = testApp();
    simulateAgents(app);
    const unknown = await create(app, { templateId: "nope", prompt: "x" });
    expect(unknown).toMatchObject({ status: 404, body: { code: "TEMPLATE_NOT_FOUND" } });
    const bare = await create(app, { prompt: "x" });
    expect(bare).toMatchObject({ status: 400, body: { code: "VALIDATION_ERROR" } });
    expect(bare.body.error).toContain("body.workDir");
    expect(app.tmux.server.windows.size).toBe(0);
  });
});
