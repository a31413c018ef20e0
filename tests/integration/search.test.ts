import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { sessionDir } from "../../src/sessions/lifecycle.ts";
import { writeOpenCodeStore } from "../helpers/agents/opencode.ts";
import { callApi, startTestRuntime, type TestRuntime } from "../helpers/runtime.ts";
import { tempDir } from "../helpers/temp.ts";
import { until } from "../helpers/until.ts";

/**
 * Search over ag's real runtime: the index in its SQLite file, kept up to date from a headless
 * session (the fake ACP agent, ag's own transcript) as it runs, the agent CLIs' own history
 * imported from a HOME that holds a Claude Code and a Codex conversation, GET /v1/search with a
 * master, a tenant and a tenant-less key, and the index kept across a restart.
 */

// biome-ignore lint/suspicious/noExplicitAny: response bodies are inspected field by field
type Json = Record<string, any>;

const FAKE = join(import.meta.dir, "..", "fakes", "acp-agent.ts");
const FIXTURES = join(import.meta.dir, "..", "fixtures");
const CLAUDE_CONVERSATION = "5ea2c400-0000-4000-8000-000000000033";
const CODEX_THREAD = "01a221a7-617d-79e2-b24d-c7b908b3765a";

const home = tempDir("ag-search-home-");
const work = tempDir("ag-search-work-");
let ag: TestRuntime;
let sessionId = "";

/**
 * The user's own history: a Claude Code conversation, a Codex rollout and OpenCode's database of
 * two conversations, as their CLIs keep them.
 */
function writeHistory() {
  writeOpenCodeStore(home);
  const project = join(home, ".claude", "projects", "-srv-elsewhere");
  mkdirSync(project, { recursive: true });
  const sample = readFileSync(join(FIXTURES, "transcripts", "sample.jsonl"), "utf8");
  writeFileSync(
    join(project, `${CLAUDE_CONVERSATION}.jsonl`),
    sample.replaceAll('"content":"say hello"', '"content":"say hello about the quokkaledger export"'),
  );
  const day = join(home, ".codex", "sessions", "2026", "11", "28");
  mkdirSync(day, { recursive: true });
  writeFileSync(
    join(day, `rollout-2026-11-28T10-15-47-${CODEX_THREAD}.jsonl`),
    readFileSync(join(FIXTURES, "agents", "codex", "0.171.0", "rollout.jsonl")),
  );
}

async function search(query: string, token?: string): Promise<{ status: number; body: Json }> {
  const response = await fetch(`${ag.url}/v1/search?${query}`, {
    headers: { authorization: `Bearer ${token ?? ag.token()}` },
  });
  return { status: response.status, body: (await response.json()) as Json };
}

const words = (hit: Json) => hit.snippet.map((p: Json) => p.text).join("");

async function newKey(scopes: string[], tenantId?: string): Promise<string> {
  const { status, body } = await callApi<Json>(ag, "POST", "/v1/auth/keys", {
    name: `search-${scopes.join("+")}-${tenantId ?? "none"}`,
    scopes,
    ...(tenantId ? { tenantId } : {}),
  });
  expect(status).toBe(201);
  return body.key;
}

beforeAll(async () => {
  writeHistory();
  ag = await startTestRuntime({}, { home });
});
afterAll(async () => {
  // The headless session's agent is ag's child: ended with its session, not left behind.
  if (ag && sessionId) await callApi(ag, "DELETE", `/v1/sessions/${sessionId}`);
  await ag?.drain(100);
  ag?.close();
});

describe("search over the real runtime", () => {
  test("a headless session's turns are found as it runs, each hit a message the cursor serves", async () => {
    const created = await callApi<Json>(ag, "POST", "/v1/sessions", {
      workDir: work,
      agent: "gemini",
      driver: "acp",
      agentCommand: [process.execPath, FAKE, "--state", tempDir("ag-search-fake-")].join(" "),
      prompt: "plan the zebraquartz migration",
    });
    expect(created.status).toBe(201);
    sessionId = created.body.id;
    let hits: Json[] = [];
    await until(async () => {
      hits = (await search("q=zebraquartz")).body.hits;
      return hits.length === 2;
    }, 15_000);
    expect(hits.map((h) => h.role).sort()).toEqual(["answer", "prompt"]);
    for (const hit of hits) {
      expect(hit).toMatchObject({
        origin: "session",
        sessionId,
        agent: "gemini",
        workDir: work,
        tenantId: null,
      });
      expect(hit.hit).toBe(`${sessionId}#${hit.messageId}`);
      expect(hit.snippet.some((p: Json) => p.hit && p.text === "zebraquartz")).toBe(true);
      const page = await callApi<Json>(
        ag,
        "GET",
        `/v1/sessions/${sessionId}/transcript/cursor?before_id=${hit.messageId + 1}&limit=1`,
      );
      expect(page.body.messages[0].id).toBe(hit.messageId);
      expect(page.body.messages[0].text).toContain("zebraquartz");
    }
  });

  test("a new line is searchable within a second of being written", async () => {
    await callApi(ag, "POST", `/v1/sessions/${sessionId}/send`, { text: "now the walrusplinth step" });
    // The moment the transcript holds the answer (the cursor reads the file), the clock starts.
    await until(async () => {
      const page = await callApi<Json>(ag, "GET", `/v1/sessions/${sessionId}/transcript/cursor?limit=5`);
      return page.body.messages.some((m: Json) => m.kind === "text" && m.text.includes("walrusplinth"));
    }, 15_000);
    const written = performance.now();
    await until(async () => (await search("q=walrusplinth&role=answer")).body.hits.length === 1, 1_000);
    expect(performance.now() - written).toBeLessThan(1_000);
  });

  test("phrases, prefixes, filters; a bad query is a 400 with its code, never a 500", async () => {
    expect((await search(`q=${encodeURIComponent('"the zebraquartz migration"')}`)).body.hits).toHaveLength(
      2,
    );
    expect((await search("q=zebraq*&role=prompt")).body.hits).toHaveLength(1);
    expect((await search("q=zebraquartz&agent=claude")).body.hits).toHaveLength(0);
    expect((await search(`q=zebraquartz&workDir=${encodeURIComponent(work)}`)).body.hits).toHaveLength(2);
    expect((await search("q=zebraquartz&since=2999-01-01T00:00:00Z")).body.hits).toHaveLength(0);
    for (const [query, code] of [
      [`q=${encodeURIComponent('"unclosed')}`, "SEARCH_QUERY_INVALID"],
      [`q=${encodeURIComponent("*** ---")}`, "SEARCH_QUERY_INVALID"],
      [`q=${encodeURIComponent("NEAR(a, b) OR col:x AND")}`, null],
      ["q=", "VALIDATION_ERROR"],
      ["", "VALIDATION_ERROR"],
      ["q=x&limit=0", "VALIDATION_ERROR"],
      ["q=x&role=narrator", "VALIDATION_ERROR"],
      ["q=x&since=yesterday", "VALIDATION_ERROR"],
    ] as const) {
      const { status, body } = await search(query);
      if (code === null) expect(status).toBe(200);
      else
        expect({ status, code: body.code, statusCode: body.statusCode }).toEqual({
          status: 400,
          code,
          statusCode: 400,
        });
    }
  });

  test("imported history is found by an admin only, and never written", async () => {
    const claudeFile = join(home, ".claude", "projects", "-srv-elsewhere", `${CLAUDE_CONVERSATION}.jsonl`);
    const before = statSync(claudeFile);
    const openCodeStore = join(home, ".local", "share", "opencode", "opencode.db");
    const storeBefore = statSync(openCodeStore);
    // The headless session's conversation as the agent itself would keep it (a Gemini chat under
    // the ACP session id ag recorded): the session is indexed already, so it is not imported.
    const { sessionId: acpSession } = JSON.parse(
      readFileSync(join(sessionDir(ag.stateDir, sessionId), "acp.json"), "utf8"),
    );
    const chats = join(home, ".gemini", "tmp", "agproject", "chats");
    mkdirSync(chats, { recursive: true });
    const gemini = readFileSync(join(FIXTURES, "agents", "gemini", "0.61.0", "session.jsonl"), "utf8");
    writeFileSync(
      join(chats, "session-2026-11-29T10-00-headless.jsonl"),
      gemini.replaceAll("0f1c7a2e-5e55-4a0e-8e00-000000022040", acpSession),
    );
    const imported = await callApi<Json>(ag, "POST", "/v1/search/import");
    expect(imported.status).toBe(200);
    expect(imported.body.external).toBe(4);
    const claude = (await search("q=quokkaledger")).body.hits;
    expect(claude).toHaveLength(1);
    expect(claude[0]).toMatchObject({
      origin: "external",
      sessionId: null,
      conversationId: CLAUDE_CONVERSATION,
      agent: "claude",
      role: "prompt",
      hit: `claude:${CLAUDE_CONVERSATION}#${claude[0].messageId}`,
    });
    expect(claude[0].workDir).toBe("/srv/agent-harness-J7aKZA/work");
    expect(words(claude[0])).toContain("say hello about the quokkaledger export");
    const codex = (await search("q=touch+approved.txt&agent=codex&role=prompt")).body.hits;
    expect(codex[0]).toMatchObject({
      origin: "external",
      conversationId: CODEX_THREAD,
      workDir: "/home/user/project",
    });
    const opencode = (await search("q=list+files&agent=opencode")).body.hits;
    expect(opencode[0]).toMatchObject({
      origin: "external",
      conversationId: "ses_dd938f31bffeW2dTCRO9jBz0ee",
      workDir: "/w/app",
      role: "answer",
      title: '"run ls"',
    });
    expect(words(opencode[0])).toContain("I'll list the files.");
    const after = statSync(claudeFile);
    expect([after.size, after.mtimeMs]).toEqual([before.size, before.mtimeMs]);
    const storeAfter = statSync(openCodeStore);
    expect([storeAfter.size, storeAfter.mtimeMs]).toEqual([storeBefore.size, storeBefore.mtimeMs]);
    // Again: nothing changed, nothing read again.
    expect((await callApi<Json>(ag, "POST", "/v1/search/import")).body.turns).toBe(imported.body.turns);
  });

  test("a tenant's key finds none of another's sessions, and no external history", async () => {
    const tenant = await newKey(["sessions:read"], "acme");
    expect((await search("q=zebraquartz", tenant)).body.hits).toEqual([]);
    expect((await search("q=quokkaledger", tenant)).body.hits).toEqual([]);
    const refused = await search("q=quokkaledger&origin=external", tenant);
    expect([refused.status, refused.body.code]).toEqual([403, "FORBIDDEN"]);
    // A key without admin sees ag's sessions, not the host's history.
    const reader = await newKey(["sessions:read"]);
    expect((await search("q=zebraquartz", reader)).body.hits).toHaveLength(2);
    expect((await search("q=quokkaledger", reader)).body.hits).toEqual([]);
    const rebuild = await fetch(`${ag.url}/v1/search/rebuild`, {
      method: "POST",
      headers: { authorization: `Bearer ${reader}` },
    });
    expect(rebuild.status).toBe(403);
  });

  test("the index survives a restart, and a rebuild reads the same turns again", async () => {
    const before = (await callApi<Json>(ag, "POST", "/v1/search/import")).body;
    await ag.drain(100);
    ag.close();
    ag = await startTestRuntime({}, { home });
    // At once: what was indexed before is there, without waiting for the catch-up.
    expect((await search("q=zebraquartz")).body.hits).toHaveLength(2);
    expect((await search("q=quokkaledger")).body.hits).toHaveLength(1);
    const rebuilt = await callApi<Json>(ag, "POST", "/v1/search/rebuild", { import: true });
    expect(rebuilt.status).toBe(200);
    expect({ sources: rebuilt.body.sources, turns: rebuilt.body.turns }).toEqual({
      sources: before.sources,
      turns: before.turns,
    });
    expect((await search("q=walrusplinth")).body.hits.length).toBeGreaterThan(0);
  });
});
