import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, readFileSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { callApi, startTestRuntime } from "../helpers/runtime.ts";
import { tempDir } from "../helpers/temp.ts";
import { until } from "../helpers/until.ts";

// biome-ignore lint/suspicious/noExplicitAny: response bodies are inspected field by field
type Json = Record<string, any>;

/**
 * A session's own key (offerMcp) through ag's real runtime (SQLite file, HTTP on port 0, a master
 * token), its sessions headless on the fake ACP agent (tests/fakes/acp-agent.ts, run by the Gemini
 * adapter's ACP entry as the session's agentCommand). The key is read where ag leaves it for the
 * agent's `ag mcp --config`: the session's private folder. Limits: 2 deep, 2 running children.
 */
const FAKE = join(import.meta.dir, "..", "fakes", "acp-agent.ts");
const MASTER = "session-keys-master-token";
const root = tempDir("ag-keys-");
const workDir = join(root, "work");
const subDir = join(workDir, "sub");
const outside = tempDir("ag-keys-outside-");
const agentCommand = [process.execPath, FAKE, "--state", tempDir("ag-keys-fake-")].join(" ");
mkdirSync(subDir, { recursive: true });
// A folder inside the creator's that is really elsewhere.
symlinkSync(outside, join(workDir, "escape"));

type Runtime = Awaited<ReturnType<typeof startTestRuntime>>;
let ag: Runtime;

beforeAll(async () => {
  ag = await startTestRuntime({
    SVC_AUTH_TOKEN: MASTER,
    SVC_SESSION_KEY_MAX_DEPTH: "2",
    SVC_SESSION_KEY_MAX_CHILDREN: "2",
  });
}, 30_000);
afterAll(async () => {
  await ag.drain(100);
  ag.close();
});

/** A REST call as the holder of `token` (a session key, or ag's own). */
async function api(token: string, method: string, path: string, body?: unknown) {
  const { status, body: answer } = await callApi<Json>(
    { url: ag.url, token: () => token },
    method,
    path,
    body,
  );
  return { status, body: answer };
}

/** A headless session on the fake agent, offered ag's MCP server (so it has a key of its own). */
function create(token: string, body: Json = {}) {
  return api(token, "POST", "/v1/sessions", {
    agent: "gemini",
    driver: "acp",
    agentCommand,
    workDir,
    offerMcp: true,
    reuse: false,
    ...body,
  });
}

async function created(token: string, body: Json = {}): Promise<Json> {
  const answer = await create(token, body);
  expect(answer.status).toBe(201);
  return answer.body;
}

/** The key ag gave the session's agent, from the file `ag mcp --config` reads. */
function keyOf(id: string): string {
  const file = join(ag.stateDir, "sessions", id, "mcp-config.json");
  return (JSON.parse(readFileSync(file, "utf8")) as { authToken: string }).authToken;
}

const statusOf = async (id: string) => (await api(MASTER, "GET", `/v1/sessions/${id}`)).body.status;
const ended = (status: string) => ["killed", "completed", "crashed"].includes(status);
const ids = (sessions: Json[]) => sessions.map((s) => s.id).sort();

function expectNotFound(answer: { status: number; body: Json }) {
  expect(answer.status).toBe(404);
  expect(answer.body).toMatchObject({ code: "SESSION_NOT_FOUND", statusCode: 404 });
}

describe("a session key reaches its own session and the sessions it created, nothing else", () => {
  let creator: Json;
  let key: string;
  let sibling: Json;
  let child: Json;

  beforeAll(async () => {
    creator = await created(MASTER, { name: "creator", permissionMode: "acceptEdits" });
    sibling = await created(MASTER, { name: "sibling" });
    key = keyOf(creator.id);
  }, 30_000);

  test("the key is bound to its session and lists only it; a sibling in the same folder is not found", async () => {
    const keys = (await api(MASTER, "GET", "/v1/auth/keys")).body as unknown as Json[];
    expect(keys.find((k) => k.sessionId === creator.id)).toMatchObject({
      name: `session ${creator.id} (ag mcp)`,
      tenantId: null,
      scopes: ["sessions:read", "sessions:write", "memory:read", "memory:write", "templates:read"],
    });
    expect(ids((await api(key, "GET", "/v1/sessions")).body as unknown as Json[])).toEqual([creator.id]);
    expect((await api(key, "GET", "/v1/sessions/stats")).body.total).toBe(1);
    expect((await api(key, "GET", `/v1/sessions/${creator.id}`)).status).toBe(200);
    expectNotFound(await api(key, "GET", `/v1/sessions/${sibling.id}`));
    expectNotFound(await api(key, "GET", `/v1/sessions/${sibling.id}/read`));
    expectNotFound(await api(key, "POST", `/v1/sessions/${sibling.id}/send`, { text: "say hello" }));
    expectNotFound(await api(key, "POST", `/v1/sessions/${sibling.id}/interrupt`));
    expectNotFound(await api(key, "DELETE", `/v1/sessions/${sibling.id}`));
    expect((await api(key, "DELETE", "/v1/sessions/batch", { ids: [sibling.id] })).body).toEqual({
      killed: [],
      notFound: [sibling.id],
    });
    // Another session's memories are as absent as the session; shared entries are shared.
    await api(MASTER, "POST", "/v1/memory", { key: `session/${sibling.id}/note`, value: "private" });
    expectNotFound(await api(key, "GET", `/v1/memory/session/${sibling.id}/note`));
    expect((await api(key, "GET", "/v1/memory")).body).toEqual([]);
    // Server-wide views and pipelines are closed to it.
    expect((await api(key, "GET", "/v1/swarm")).status).toBe(403);
    expect((await api(key, "GET", "/v1/pipelines")).status).toBe(403);
    expect(await statusOf(sibling.id)).toBe("idle");
  }, 30_000);

  test("a session it creates is its child, which it sees and drives; the child's key sees only the child", async () => {
    child = await created(key, {
      name: "child",
      workDir: subDir,
      permissionMode: "default",
      prompt: "say hello",
    });
    expect(child.parentId).toBe(creator.id);
    expect(ids((await api(key, "GET", "/v1/sessions")).body as unknown as Json[])).toEqual(
      [creator.id, child.id].sort(),
    );
    await until(async () => (await statusOf(child.id)) === "idle", 15_000);
    expect((await api(key, "POST", `/v1/sessions/${child.id}/send`, { text: "say hello" })).status).toBe(200);
    await until(async () => (await statusOf(child.id)) === "idle", 15_000);
    expect((await api(key, "GET", `/v1/sessions/${child.id}/read`)).body.output).toBe(
      "Hello from the fake agent!",
    );
    const childKey = keyOf(child.id);
    expect(ids((await api(childKey, "GET", "/v1/sessions")).body as unknown as Json[])).toEqual([child.id]);
    // Not even its creator.
    expectNotFound(await api(childKey, "GET", `/v1/sessions/${creator.id}`));
  }, 30_000);

  test("never a more permissive mode than its creator's, given or from a template", async () => {
    const bypass = await create(key, { permissionMode: "bypassPermissions" });
    expect(bypass.status).toBe(403);
    expect(bypass.body).toMatchObject({ code: "PERMISSION_MODE_DENIED", statusCode: 403 });
    const template = await api(MASTER, "POST", "/v1/templates", {
      name: "yolo",
      workDir: subDir,
      autoApprove: true,
    });
    expect(template.status).toBe(201);
    const viaTemplate = await create(key, { templateId: template.body.id, workDir: undefined });
    expect(viaTemplate.status).toBe(403);
    expect(viaTemplate.body.code).toBe("PERMISSION_MODE_DENIED");
  });

  test("never a folder outside its creator's (real paths: a link inside that points out is out)", async () => {
    for (const dir of [outside, join(workDir, "escape"), join(workDir, ".."), join(outside, "missing")]) {
      const answer = await create(key, { workDir: dir });
      expect(answer.status).toBe(403);
      expect(answer.body).toMatchObject({ code: "CREATOR_WORKDIR_DENIED", statusCode: 403 });
    }
  });

  test("never another program or environment than its creator's", async () => {
    const program = await create(key, { agentCommand: "sh -c 'echo elsewhere'" });
    expect(program.status).toBe(403);
    expect(program.body.code).toBe("FORBIDDEN");
    const env = await create(key, { env: { NODE_OPTIONS: "--require /tmp/x.js" } });
    expect(env.status).toBe(403);
    expect(env.body.code).toBe("FORBIDDEN");
  });

  test("nesting stops at sessionKeyMaxDepth", async () => {
    const grandchild = await created(keyOf(child.id), { name: "grandchild", workDir: subDir });
    expect(grandchild.parentId).toBe(child.id);
    // The creator sees its grandchild too.
    expect((await api(key, "GET", `/v1/sessions/${grandchild.id}`)).status).toBe(200);
    const deeper = await create(keyOf(grandchild.id), { workDir: subDir });
    expect(deeper.status).toBe(403);
    expect(deeper.body).toMatchObject({ code: "SESSION_DEPTH_LIMIT", statusCode: 403 });
  }, 30_000);

  test("at most sessionKeyMaxChildren running at once, batches included; a place frees when one ends", async () => {
    const second = await created(key, { name: "second" });
    const third = await create(key, { name: "third" });
    expect(third.status).toBe(429);
    expect(third.body).toMatchObject({ code: "SESSION_CHILDREN_LIMIT", statusCode: 429 });
    const batch = await api(key, "POST", "/v1/sessions/batch", {
      sessions: [0, 1].map((i) => ({ agent: "gemini", driver: "acp", agentCommand, workDir, name: `b${i}` })),
    });
    expect(batch.body.created).toEqual([]);
    expect(batch.body.failed.map((f: Json) => f.code)).toEqual([
      "SESSION_CHILDREN_LIMIT",
      "SESSION_CHILDREN_LIMIT",
    ]);
    expect((await api(key, "DELETE", `/v1/sessions/${second.id}`)).status).toBe(200);
    const again = await created(key, { name: "third" });
    expect(again.parentId).toBe(creator.id);
  }, 30_000);

  test("when the creator ends, all it created ends with it, recorded in the audit log; its key dies", async () => {
    const before = (await api(MASTER, "GET", "/v1/sessions")).body as unknown as Json[];
    const family = before
      .filter((s) => s.id !== creator.id && !ended(s.status))
      .filter((s) => s.parentId === creator.id || s.parentId === child.id)
      .map((s) => s.id);
    expect(family.length).toBe(3); // child, grandchild, the third
    expect((await api(MASTER, "DELETE", `/v1/sessions/${creator.id}`)).status).toBe(200);
    for (const id of family) expect(await statusOf(id)).toBe("killed");
    expect(await statusOf(sibling.id)).toBe("idle");
    const audit = (await api(MASTER, "GET", "/v1/audit?limit=500")).body as unknown as Json[];
    const cascaded = audit.filter((r) => r.action === "session.kill.cascade").map((r) => r.target);
    expect(cascaded.sort()).toEqual([...family].sort());
    const refused = await api(key, "GET", "/v1/sessions");
    expect(refused.status).toBe(401);
    const keys = (await api(MASTER, "GET", "/v1/auth/keys")).body as unknown as Json[];
    expect(keys.filter((k) => family.includes(k.sessionId) || k.sessionId === creator.id)).toEqual([]);
  }, 30_000);

  test("a creator whose agent exits by itself takes its children with it", async () => {
    const parent = await created(MASTER, { name: "mortal" });
    const orphan = await created(keyOf(parent.id), { name: "would-be-orphan" });
    expect((await api(MASTER, "POST", `/v1/sessions/${parent.id}/send`, { text: "die" })).status).toBe(200);
    await until(async () => ended(await statusOf(parent.id)), 15_000);
    await until(async () => (await statusOf(orphan.id)) === "killed", 15_000);
    const session = (await api(MASTER, "GET", `/v1/sessions/${orphan.id}`)).body;
    expect(session.endReason).toBe("killed");
  }, 30_000);
});

describe("a person's decisions stay a person's", () => {
  /** A child of a new creator in `mode`, waiting for its permission to write a file. */
  async function waitingChild(mode: string) {
    const creator = await created(MASTER, { name: `creator-${mode}`, permissionMode: mode });
    const key = keyOf(creator.id);
    const child = await created(key, {
      name: `child-${mode}`,
      permissionMode: mode,
      prompt: "write file x.txt",
    });
    await until(async () => (await statusOf(child.id)) === "permission_prompt", 15_000);
    return { creator, key, child };
  }

  test("a key whose session a person supervises cannot approve for its children, nor loosen their policy", async () => {
    const { creator, key, child } = await waitingChild("default");
    for (const [method, path, body] of [
      ["POST", "approve", {}],
      ["POST", "answer", { option: 1 }],
      ["PUT", "permission-profile", { profile: "full" }],
      ["PUT", "permissions", { allowRead: true, allowWrite: true, allowBash: true }],
    ] as const) {
      const answer = await api(key, method, `/v1/sessions/${child.id}/${path}`, body);
      expect(answer.status).toBe(403);
      expect(answer.body).toMatchObject({ code: "FORBIDDEN" });
      expect(answer.body.error).toContain(`runs in default, so a person decides`);
    }
    expect(await statusOf(child.id)).toBe("permission_prompt");
    // Refusing is no decision a person must make.
    expect((await api(key, "POST", `/v1/sessions/${child.id}/reject`, {})).status).toBe(200);
    await until(async () => (await statusOf(child.id)) === "idle", 15_000);
    expect((await api(MASTER, "DELETE", `/v1/sessions/${creator.id}`)).status).toBe(200);
  }, 30_000);

  test("a key whose session asks nobody (bypassPermissions) may approve for its children", async () => {
    const { creator, key, child } = await waitingChild("bypassPermissions");
    expect((await api(key, "POST", `/v1/sessions/${child.id}/approve`, {})).status).toBe(200);
    await until(async () => (await statusOf(child.id)) === "idle", 15_000);
    expect((await api(MASTER, "DELETE", `/v1/sessions/${creator.id}`)).status).toBe(200);
  }, 30_000);
});
