import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { type FakeBotApi, startFakeBotApi } from "../fakes/bot-api.ts";
import { type AgentWorld, startAgentWorld } from "../helpers/agent-world.ts";
import { compiledBinary, freePort, runAg } from "../helpers/binary.ts";
import { gitRepository } from "../helpers/git.ts";
import { type SseMessage, type SseReader, sseReader } from "../helpers/sse.ts";

// biome-ignore lint/suspicious/noExplicitAny: response bodies are inspected field by field
type Json = Record<string, any>;

/**
 * Budgets and handoff on the REAL Claude Code CLI (and Codex CLI, which takes tasks over) through
 * the compiled binary, against the mock model: a tiny budget pauses a session after its turn, its
 * next prompt is refused with BUDGET_REACHED and held, budget.reached reaches SSE, a webhook and
 * the chat bot, whose button raises the budget and the held prompt is answered once; a tenant's
 * monthly budget pauses all its sessions; a session whose model keeps answering 429 is handed to
 * Codex by policy, whose first request is the brief; a manual handoff links both sessions.
 */
const alice = { id: 777, first_name: "Alice", username: "alice" };
const hookPort = freePort();
let world: AgentWorld;
let bot: FakeBotApi;
let receiver: ReturnType<typeof Bun.serve>;
let events: SseReader;
const hooks: Json[] = [];
const seen: Json[] = [];

beforeAll(async () => {
  bot = startFakeBotApi();
  receiver = Bun.serve({
    port: hookPort,
    hostname: "127.0.0.1",
    async fetch(request) {
      hooks.push((await request.json()) as Json);
      return new Response("ok");
    },
  });
  world = await startAgentWorld(
    {
      // Claude Code gives up on a 429 after two retries (its default, ten, takes minutes).
      CLAUDE_CODE_MAX_RETRIES: "2",
      SVC_CHAT_BOT_TOKEN: bot.token,
      SVC_CHAT_GROUP_ID: bot.groupId,
      SVC_CHAT_ALLOWED_USERS: String(alice.id),
      SVC_CHAT_API_BASE: bot.url,
      SVC_WEBHOOKS: JSON.stringify([
        { url: `http://127.0.0.1:${hookPort}/hook`, events: ["budget.reached", "session.handoff"] },
      ]),
    },
    {
      agents: ["claude", "codex"],
      beforeStart(root) {
        writeFileSync(
          join(root, "svc.config.json"),
          JSON.stringify({
            budgets: { tenants: { acme: { monthUsd: 0.000001 } } },
            handoff: { on: ["rate_limit"], to: ["codex"], afterMs: 1_000 },
          }),
        );
      },
    },
  );
  events = sseReader((await fetch(`${world.ag.url}/v1/events`)).body!);
}, 120_000);
afterAll(async () => {
  await events?.cancel().catch(() => {});
  await world?.stop();
  receiver?.stop(true);
  bot?.stop();
});

/** Reads the event stream until an event matches (kept in `seen` for later checks). */
async function sseEvent(match: (e: Json) => boolean, guardMs = 60_000): Promise<Json> {
  const found = seen.find(match);
  if (found) return found;
  const deadline = Date.now() + guardMs;
  while (Date.now() < deadline) {
    const [message] = (await events.take(1, deadline - Date.now()).catch((error: Error) => {
      const names = seen.map((e) => `${e.event} ${e.session?.name ?? ""} ${e.detail ?? ""}`.slice(0, 160));
      throw new Error(
        `${error.message}; seen:\n${names.slice(-40).join("\n")}\nag:\n${world.ag.stderr().slice(-3000)}`,
      );
    })) as SseMessage[];
    if (!message?.data) continue;
    const event = message.data as Json;
    seen.push(event);
    if (match(event)) return event;
  }
  throw new Error("no such event on the stream");
}

async function until(check: () => boolean | Promise<boolean>, ms = 30_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error("condition not met in time");
    await Bun.sleep(100);
  }
}

const count = (texts: string[], text: string) => texts.filter((t) => t === text).length;

describe("a session's budget", () => {
  let id: string;

  test("a tiny budget pauses the session after its turn: the session shows it, SSE, a webhook and the chat bot say so", async () => {
    const created = await world.api<Json>("POST", "/v1/sessions", {
      workDir: world.workDir,
      name: "budget-e2e",
      prompt: "say hello",
      budget: { usd: 0.000001 },
    });
    expect(created.status).toBe(201);
    id = created.body.id;
    expect(created.body.budget).toMatchObject({ usd: 0.000001 });

    const reached = await sseEvent((e) => e.event === "budget.reached" && e.session?.id === id);
    expect(reached.meta).toMatchObject({ budget: "session", usd: 0.000001, state: "reached" });
    expect(reached.meta.spentUsd).toBeGreaterThan(0.000001);
    expect(reached.meta.url).toBe(`http://localhost:${world.env.SVC_PORT}/dashboard/#/sessions/${id}`);
    // Paused, not ended: the agent is still there, idle, with its conversation.
    const session = await world.waitFor(id, "idle");
    expect(session.budget).toMatchObject({ state: "reached", reachedBy: "session", heldPrompt: false });

    await until(() => hooks.some((h) => h.event === "budget.reached" && h.session?.id === id));
    await bot.until(() => bot.messages.some((m) => m.text.includes("budget reached")), 15_000);
    const overview = await world.api<Json>("GET", "/v1/budgets");
    expect(overview.body.sessions).toContainEqual(expect.objectContaining({ id, state: "reached" }));
    const metrics = await fetch(`${world.ag.url}/metrics`).then((r) => r.text());
    expect(metrics).toMatch(new RegExp(`ag_budget_limit_usd\\{budget="session:${id}"\\} `));
  }, 120_000);

  test("the next prompt is refused with BUDGET_REACHED naming the budget, and held: the model never gets it", async () => {
    const before = world.prompts().length;
    const refused = await world.api<Json>("POST", `/v1/sessions/${id}/send`, { text: "say hello again" });
    expect(refused.status).toBe(402);
    expect(refused.body).toMatchObject({ code: "BUDGET_REACHED", statusCode: 402 });
    expect(refused.body.error).toContain("session budget $0.000001 ($0.");
    expect(refused.body.error).toContain("held");
    const session = await world.api<Json>("GET", `/v1/sessions/${id}`);
    expect(session.body.budget.heldPrompt).toBe(true);
    expect(world.prompts().length).toBe(before);
  }, 30_000);

  test("the chat bot's raise button raises the budget; the held prompt is answered once", async () => {
    const message = bot.messages.find(
      (m) => m.text.includes("budget reached") && m.reply_markup !== undefined,
    )!;
    expect(message.text).toContain(`🔗 http://localhost:${world.env.SVC_PORT}/dashboard/#/sessions/${id}`);
    bot.press(alice, message, "Raise by $1.00");
    const raised = await sseEvent((e) => e.event === "budget.raised" && e.session?.id === id);
    expect(raised.meta.state).not.toBe("reached");
    await until(() => world.prompts().includes("say hello again"), 30_000);
    await world.waitFor(id, "idle");
    const session = await world.api<Json>("GET", `/v1/sessions/${id}`);
    expect(session.body.budget).toMatchObject({ heldPrompt: false });
    expect(session.body.budget.usd).toBeCloseTo(1.000001, 6);
    await bot.until(() => message.edits > 0);
    expect(message.text).toEndWith("Budget raised by $1.00 by @alice");
    // Once: another raise delivers nothing more.
    const again = await world.api<Json>("POST", `/v1/sessions/${id}/budget`, { usd: 5 });
    expect(again.status).toBe(200);
    expect(count(world.prompts(), "say hello again")).toBe(1);
  }, 90_000);

  test("ag budget shows, sets and clears it; ag list has its column", async () => {
    const binary = await compiledBinary();
    const ag = (args: string[]) => runAg(binary, args, { env: world.env });
    const shown = await ag(["budget", id]);
    expect(shown.exitCode).toBe(0);
    expect(shown.stdout).toMatch(/budget\s+\$[\d.<]+\/\$5\.00/);
    expect(shown.stdout).toMatch(/state\s+ok/);
    const set = await ag(["budget", id, "--usd", "7.5", "--json"]);
    expect(JSON.parse(set.stdout)).toMatchObject({ usd: 7.5, state: "ok" });
    const list = await ag(["list"]);
    expect(list.stdout).toMatch(new RegExp(`^${id.slice(0, 8)}\\s.*\\$7\\.50\\s`, "m"));
    const cleared = await ag(["budget", id, "--clear", "--json"]);
    expect(JSON.parse(cleared.stdout)).toMatchObject({ usd: null });
    const refused = await ag(["budget", id, "--usd", "lots"]);
    expect(refused.exitCode).toBe(1);
    expect(refused.stderr).toContain("[USAGE_ERROR]");
    await world.api("DELETE", `/v1/sessions/${id}`);
  }, 60_000);
});

describe("interruptAtCap", () => {
  test("a session that asks for it is interrupted at once when its turn passes the cap", async () => {
    const created = await world.api<Json>("POST", "/v1/sessions", {
      workDir: world.workDir,
      name: "budget-now",
      prompt: "run cmd: sleep 60 && touch late.txt",
      permissionMode: "bypassPermissions",
      reuse: false,
      budget: { usd: 0.000001, interruptAtCap: true },
    });
    expect(created.status).toBe(201);
    const id = created.body.id;
    const reached = await sseEvent((e) => e.event === "budget.reached" && e.session?.id === id);
    expect(reached.meta.state).toBe("reached");
    // The command's sixty seconds never run out: the turn is interrupted.
    const ended = await sseEvent((e) => e.event === "session.turn_ended" && e.session?.id === id, 30_000);
    expect(ended.meta.reason).toBe("interrupted");
    expect((await world.api<Json>("GET", `/v1/sessions/${id}`)).body.budget).toMatchObject({
      state: "reached",
      interruptAtCap: true,
    });
    await world.api("DELETE", `/v1/sessions/${id}`);
  }, 90_000);
});

describe("a tenant's monthly budget", () => {
  test("spent by one session, it pauses every session of the tenant", async () => {
    const key = await world.api<Json>("POST", "/v1/auth/keys", {
      name: "acme",
      scopes: ["sessions:read", "sessions:write"],
      tenantId: "acme",
    });
    expect(key.status).toBe(201);
    const asAcme = async (method: string, path: string, body?: unknown) => {
      const response = await fetch(`${world.ag.url}${path}`, {
        method,
        headers: { authorization: `Bearer ${key.body.key}`, "content-type": "application/json" },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      return { status: response.status, body: (await response.json()) as Json };
    };
    const quiet = await asAcme("POST", "/v1/sessions", { workDir: world.workDir, reuse: false });
    expect(quiet.status).toBe(201);
    const busy = await asAcme("POST", "/v1/sessions", {
      workDir: world.workDir,
      prompt: "say hi",
      reuse: false,
    });
    expect(busy.status).toBe(201);

    for (const id of [quiet.body.id, busy.body.id]) {
      const reached = await sseEvent((e) => e.event === "budget.reached" && e.session?.id === id);
      expect(reached.meta).toMatchObject({ budget: "tenant:acme:month", usd: 0.000001 });
    }
    const refused = await asAcme("POST", `/v1/sessions/${quiet.body.id}/send`, { text: "anything" });
    expect(refused.status).toBe(402);
    expect(refused.body.error).toContain("tenant:acme:month budget");
    const listed = await asAcme("GET", "/v1/budgets");
    expect(listed.body.sessions.map((s: Json) => s.id).sort()).toEqual([quiet.body.id, busy.body.id].sort());
    for (const id of [quiet.body.id, busy.body.id]) await world.api("DELETE", `/v1/sessions/${id}`);
  }, 120_000);
});

describe("handoff", () => {
  let repo: string;

  beforeAll(() => {
    repo = join(world.workDir, "..", "repo");
    mkdirSync(repo, { recursive: true });
    gitRepository(repo);
  });

  test("a session whose model keeps answering 429 is handed to Codex by policy; Codex's first request is the brief", async () => {
    const created = await world.api<Json>("POST", "/v1/sessions", {
      workDir: repo,
      name: "limited",
      prompt: "edit file",
      permissionMode: "bypassPermissions",
    });
    expect(created.status).toBe(201);
    const id = created.body.id;
    await sseEvent((e) => e.event === "session.turn_ended" && e.session?.id === id);
    expect((await world.api<Json>("POST", `/v1/sessions/${id}/send`, { text: "rate limit" })).status).toBe(
      200,
    );

    const handoff = await sseEvent((e) => e.event === "session.handoff" && e.meta.from === id, 120_000);
    expect(handoff.meta).toMatchObject({ agent: "codex", trigger: "rate_limit" });
    await until(() => hooks.some((h) => h.event === "session.handoff" && h.meta.from === id));
    const to = handoff.meta.to as string;
    const codex = await world.api<Json>("GET", `/v1/sessions/${to}`);
    expect(codex.body).toMatchObject({ agent: "codex", workDir: repo, handedOffFrom: id });
    expect((await world.api<Json>("GET", `/v1/sessions/${id}`)).body.handedOffTo).toBe(to);

    await until(() => world.prompts().some((p) => p.includes("You are taking over a task")), 60_000);
    const brief = world.prompts().find((p) => p.includes("You are taking over a task"))!;
    expect(brief).toContain("## The task, as first asked\nedit file");
    expect(brief).toContain("hello.txt");
    expect(brief).toContain("- rate limit");
    for (const session of [id, to]) await world.api("DELETE", `/v1/sessions/${session}`);
  }, 240_000);

  test("a manual handoff from Claude Code to Codex carries the brief and the note; both sessions link each other", async () => {
    const created = await world.api<Json>("POST", "/v1/sessions", {
      workDir: repo,
      name: "manual",
      prompt: "say hello",
      reuse: false,
    });
    const id = created.body.id;
    await sseEvent((e) => e.event === "session.turn_ended" && e.session?.id === id);
    const handed = await world.api<Json>("POST", `/v1/sessions/${id}/handoff`, {
      agent: "codex",
      note: "keep it short",
    });
    expect(handed.status).toBe(201);
    expect(handed.body.from).toMatchObject({ id, handedOffTo: handed.body.to.id });
    expect(handed.body.to).toMatchObject({ agent: "codex", workDir: repo, handedOffFrom: id });
    expect(handed.body.brief).toContain("## The task, as first asked\nsay hello");
    expect(handed.body.brief).toContain("keep it short");
    await until(() => world.prompts().some((p) => p.includes("keep it short")), 60_000);
    const refused = await world.api<Json>("POST", `/v1/sessions/${id}/handoff`, { agent: "claude" });
    expect(refused).toMatchObject({ status: 400, body: { code: "VALIDATION_ERROR" } });
    for (const session of [id, handed.body.to.id]) await world.api("DELETE", `/v1/sessions/${session}`);
  }, 180_000);
});
