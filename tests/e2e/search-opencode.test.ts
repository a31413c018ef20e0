import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { openCodeHistory } from "../../src/agents/opencode/history.ts";
import { type AgentWorld, startAgentWorld } from "../helpers/agent-world.ts";

// biome-ignore lint/suspicious/noExplicitAny: response bodies are inspected field by field
type Json = Record<string, any>;

/**
 * OpenCode's own history, imported from the store the REAL OpenCode (opencode-ai 1.18.33) keeps,
 * through the compiled binary and the mock model: a conversation the user ran themselves
 * (`opencode run`) is found as external, in its folder; the conversation of ag's own headless
 * OpenCode session, which OpenCode keeps in the same store, is found as that session only. One
 * OpenCode at a time.
 */
let world: AgentWorld;
let headless = "";

beforeAll(async () => {
  world = await startAgentWorld({}, { agents: ["opencode"] });
}, 60_000);
afterAll(async () => {
  if (headless) await world?.api("DELETE", `/v1/sessions/${headless}`);
  await world?.stop();
});

async function search(query: string): Promise<Json[]> {
  const answer = await world.api<Json>("GET", `/v1/search?${query}`);
  expect(answer.status).toBe(200);
  return answer.body.hits;
}

test("the user's own OpenCode conversation is imported read-only; ag's session is not imported again", async () => {
  const created = await world.api<Json>("POST", "/v1/sessions", {
    agent: "opencode",
    driver: "acp",
    workDir: world.workDir,
    prompt: "plan the tapirgrove rollout",
  });
  expect(created.status).toBe(201);
  headless = created.body.id;
  await world.waitFor(headless, "idle", 60_000);

  // The user's own run, in a folder of theirs, as they would type it.
  const folder = join(world.workDir, "mine");
  mkdirSync(folder);
  const run = Bun.spawn(["opencode", "run", "plan the okapiframe export"], {
    cwd: folder,
    env: { ...world.env, PWD: folder },
    stdout: "pipe",
    stderr: "pipe",
  });
  const code = await run.exited;
  expect({ code, stderr: code === 0 ? "" : await new Response(run.stderr).text() }).toEqual({
    code: 0,
    stderr: "",
  });
  const store = join(world.env.HOME!, ".local", "share", "opencode", "opencode.db");
  const before = statSync(store);
  // OpenCode keeps both conversations there: the user's and ag's session's.
  expect((await openCodeHistory(store)).length).toBe(2);

  const imported = await world.api<Json>("POST", "/v1/search/import");
  expect(imported.status).toBe(200);
  const [hit] = await search("q=okapiframe&role=prompt");
  expect(hit).toMatchObject({
    origin: "external",
    agent: "opencode",
    workDir: folder,
    conversationId: expect.stringMatching(/^ses_/),
    hit: expect.stringMatching(/^opencode:ses_\w+#\d+$/),
  });
  expect((hit!.snippet as Json[]).map((p) => p.text).join("")).toContain("plan the okapiframe export");
  const answers = await search("q=okapiframe&role=answer&agent=opencode");
  expect(answers.map((h) => h.conversationId)).toEqual([hit!.conversationId]);

  // ag's headless session: found as the session it is, never as an external conversation.
  const session = await search("q=tapirgrove");
  expect(session.length).toBeGreaterThan(0);
  expect(new Set(session.map((h) => h.origin))).toEqual(new Set(["session"]));
  expect(session.every((h) => h.sessionId === headless)).toBe(true);

  // Read only: the store is as OpenCode left it.
  const after = statSync(store);
  expect([after.size, after.mtimeMs]).toEqual([before.size, before.mtimeMs]);
}, 180_000);
