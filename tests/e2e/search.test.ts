import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { encodeProjectDir } from "../../src/agents/claude/transcript-files.ts";
import { type AgentWorld, startAgentWorld } from "../helpers/agent-world.ts";
import { launchChromium } from "../helpers/browser.ts";

// biome-ignore lint/suspicious/noExplicitAny: response bodies are inspected field by field
type Json = Record<string, any>;

/**
 * Search with the REAL Claude Code through the compiled binary and the mock model: words from a
 * live turn, an ended session, a headless (acp) session and an imported conversation of the
 * user's own are each found, best first, with snippets; a tenant's key finds none of them; a hit
 * resumed (an ag session) or continued (the user's conversation, as a fork) carries the earlier
 * turns to the model; the index outlives a restart. At most two agents at a time.
 */
let world: AgentWorld;
const EXTERNAL = "e7e7e7e7-0000-4000-8000-000000000033";
/** The user's own conversation file, and its mtime when it was written. */
const external = { file: "", mtimeMs: 0 };

beforeAll(async () => {
  world = await startAgentWorld();
}, 120_000);
afterAll(async () => {
  await world?.stop();
});

async function create(body: Json): Promise<string> {
  const created = await world.api<Json>("POST", "/v1/sessions", {
    reuse: false,
    workDir: world.workDir,
    ...body,
  });
  expect(created.status).toBe(201);
  await world.waitFor(created.body.id, "idle", 60_000);
  return created.body.id;
}

async function search(query: string, token?: string): Promise<Json[]> {
  const response = await fetch(`${world.ag.url}/v1/search?${query}`, {
    headers: { authorization: `Bearer ${token ?? world.ag.token()}` },
  });
  expect(response.status).toBe(200);
  return ((await response.json()) as Json).hits;
}

/** Polls until the query finds `count` hits (the index follows the transcript; bounded). */
async function found(query: string, count: number, timeoutMs = 10_000): Promise<Json[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const hits = await search(query);
    if (hits.length >= count || Date.now() > deadline) return hits;
    await Bun.sleep(50);
  }
}

const text = (hit: Json) => (hit.snippet as Json[]).map((p) => p.text).join("");
const marked = (hit: Json) => (hit.snippet as Json[]).filter((p) => p.hit).map((p) => p.text.toLowerCase());

/** The human prompts the model got with the last request for `prompt`. */
const historyOf = (prompt: string) =>
  world.mock.requests().findLast((r) => r.kind === "main" && r.prompt === prompt)?.history;

describe("search over real Claude Code sessions", () => {
  let live = "";
  let ended = "";

  test("a live turn, an ended session and a headless session are found, each with its snippet", async () => {
    live = await create({ prompt: "plan the zebraquartz migration" });
    const liveHits = await found("q=zebraquartz", 2);
    expect(liveHits.map((h) => h.role).sort()).toEqual(["answer", "prompt"]);
    for (const hit of liveHits) {
      expect(hit).toMatchObject({
        sessionId: live,
        agent: "claude",
        origin: "session",
        workDir: world.workDir,
      });
      expect(marked(hit)).toContain("zebraquartz");
    }
    expect((await world.api("DELETE", `/v1/sessions/${live}`)).status).toBe(200);

    ended = await create({ prompt: "document the walrusplinth rollout" });
    expect((await world.api("DELETE", `/v1/sessions/${ended}`)).status).toBe(200);
    // Its answer indexed: the turn is in the file whole before the file is copied below.
    expect(await found("q=walrusplinth&role=answer", 1)).toHaveLength(1);
    const endedHits = await found("q=walrusplinth&role=prompt", 1);
    expect(endedHits[0]).toMatchObject({ sessionId: ended, status: "killed" });
    expect(text(endedHits[0]!)).toBe("document the walrusplinth rollout");

    const headless = await create({
      agent: "claude",
      driver: "acp",
      prompt: "sketch the quokkaledger export",
    });
    const headlessHits = await found("q=quokkaledger", 2);
    expect(headlessHits.every((h) => h.sessionId === headless)).toBe(true);
    expect(headlessHits.map((h) => h.role).sort()).toEqual(["answer", "prompt"]);
    expect((await world.api("DELETE", `/v1/sessions/${headless}`)).status).toBe(200);
  }, 240_000);

  test("the user's own Claude Code conversation is imported read-only, and ranks among the rest", async () => {
    // A conversation of the user's, in another folder: the ended session's file as Claude Code wrote it.
    const claudeProjects = join(world.env.HOME!, ".claude", "projects");
    const written = readFileSync(
      join(claudeProjects, encodeProjectDir(world.workDir), `${ended}.jsonl`),
      "utf8",
    );
    const folder = join(world.workDir, "mine");
    mkdirSync(folder);
    mkdirSync(join(claudeProjects, encodeProjectDir(folder)), { recursive: true });
    const file = join(claudeProjects, encodeProjectDir(folder), `${EXTERNAL}.jsonl`);
    writeFileSync(
      file,
      written
        .replaceAll(ended, EXTERNAL)
        .replaceAll(JSON.stringify(world.workDir), JSON.stringify(folder))
        .replaceAll("walrusplinth", "narwhalbeacon"),
    );
    const before = statSync(file);
    Object.assign(external, { file, mtimeMs: before.mtimeMs });
    const imported = await world.api<Json>("POST", "/v1/search/import");
    expect(imported.status).toBe(200);
    const [hit] = await search("q=narwhalbeacon&role=prompt");
    expect(hit).toMatchObject({
      origin: "external",
      conversationId: EXTERNAL,
      agent: "claude",
      workDir: folder,
    });
    expect(text(hit!)).toBe("document the narwhalbeacon rollout");

    // Every hit, best first (BM25), each with its matched words marked.
    const all = await search(
      `q=${encodeURIComponent("zebraquartz OR walrusplinth OR quokkaledger OR narwhalbeacon")}`,
    );
    expect(new Set(all.map((h) => h.origin))).toEqual(new Set(["session", "external"]));
    expect(all.map((h) => h.rank)).toEqual([...all.map((h) => h.rank)].sort((a, b) => a - b));
    expect(all.every((h) => marked(h).length > 0)).toBe(true);
    expect(statSync(file).mtimeMs).toBe(before.mtimeMs);
  }, 60_000);

  test("a tenant's key finds none of them", async () => {
    const key = await world.api<Json>("POST", "/v1/auth/keys", {
      name: "acme",
      scopes: ["*"],
      tenantId: "acme",
    });
    expect(key.status).toBe(201);
    for (const word of ["zebraquartz", "walrusplinth", "quokkaledger", "narwhalbeacon"])
      expect(await search(`q=${word}`, key.body.key)).toEqual([]);
  });

  test("the console's search box: hits with their words marked, ↓ and Enter open the chosen one at its message", async () => {
    const browser = await launchChromium();
    try {
      // ag on loopback with its own token: the page is served to this machine's browser as it is.
      const page = await browser.newPage();
      const problems: string[] = [];
      page.on("pageerror", (e) => problems.push(e.message));
      page.on("console", (m) => m.type() === "error" && problems.push(m.text()));
      await page.goto(`${world.ag.url}/dashboard/#/search/zebraquartz`);
      await page.waitForFunction(() => document.querySelectorAll("#search-hits li").length === 2);
      expect(await page.locator("#search-hits li mark").first().textContent()).toBe("zebraquartz");
      expect(await page.getAttribute("#hit-0", "aria-current")).toBe("true");
      await page.focus("#search-box");
      await page.keyboard.press("ArrowDown");
      expect(await page.getAttribute("#hit-1", "aria-current")).toBe("true");
      await page.keyboard.press("Enter");
      // At the chosen hit's message (tests/integration/search-console.test.ts follows it there).
      await page.waitForFunction((id) => location.hash.startsWith(`#/sessions/${id}?at=`), live);
      expect(problems).toEqual([]);
    } finally {
      await browser.close();
    }
  }, 60_000);

  test("picked up from a hit, the model sees the earlier turns: an ended session resumed, the user's conversation forked", async () => {
    const [endedHit] = await search("q=walrusplinth&role=prompt");
    const resumed = await world.api<Json>("POST", "/v1/search/continue", { hit: endedHit!.hit });
    expect([resumed.status, resumed.body.id]).toEqual([200, ended]);
    await world.waitFor(ended, "idle", 60_000);
    await world.api("POST", `/v1/sessions/${ended}/send`, { text: "what did we document" });
    await world.waitFor(ended, "idle", 60_000);
    expect(historyOf("what did we document")).toEqual([
      "document the walrusplinth rollout",
      "what did we document",
    ]);
    expect((await world.api("DELETE", `/v1/sessions/${ended}`)).status).toBe(200);

    const [externalHit] = await search("q=narwhalbeacon&role=prompt");
    const continued = await world.api<Json>("POST", "/v1/search/continue", { hit: externalHit!.hit });
    expect([continued.status, continued.body.code]).toEqual([201, undefined]);
    expect(continued.body).toMatchObject({ agent: "claude", workDir: join(world.workDir, "mine") });
    await world.waitFor(continued.body.id, "idle", 60_000);
    await world.api("POST", `/v1/sessions/${continued.body.id}/send`, { text: "what did I document" });
    await world.waitFor(continued.body.id, "idle", 60_000);
    expect(historyOf("what did I document")).toEqual([
      "document the narwhalbeacon rollout",
      "what did I document",
    ]);
    expect((await world.api("DELETE", `/v1/sessions/${continued.body.id}`)).status).toBe(200);
  }, 240_000);

  test("a restart keeps the index", async () => {
    await world.restart();
    expect((await search("q=zebraquartz")).length).toBe(2);
    expect((await search("q=narwhalbeacon&role=prompt"))[0]).toMatchObject({ conversationId: EXTERNAL });
  }, 60_000);
});
