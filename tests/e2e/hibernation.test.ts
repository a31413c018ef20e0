import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { type AgentWorld, startAgentWorld } from "../helpers/agent-world.ts";
import { agToken } from "../helpers/binary.ts";
import { isAlive } from "../helpers/stream.ts";

// biome-ignore lint/suspicious/noExplicitAny: response bodies are inspected field by field
type Json = Record<string, any>;

/**
 * Hibernation (docs/hibernation.md) on the REAL Claude Code through the mock model, on both
 * drivers (tmux: its terminal UI, `claude --resume`; acp: claude-code-acp, `session/load`), and
 * the compiled binary: an idle session's agent is ended after its own short idle time, the session
 * stays idle and listed, a prompt wakes it on its own conversation and is delivered once; what is
 * waited on, watched or pinned stays up; hibernated sessions stay so across a restart of ag.
 */
let world: AgentWorld;

beforeAll(async () => {
  // The server's own default: every session without a setting of its own hibernates.
  world = await startAgentWorld({ SVC_HIBERNATE_AFTER_MS: "1500" });
}, 60_000);
afterAll(async () => {
  await world?.stop();
});

const SHORT = { afterMs: 1_000 };
/** Long enough to read the running agent's pid first. */
const AFTER_IDLE = { afterMs: 3_000 };

/** Polls `check` every 100 ms until it holds; throws after `ms`. */
async function eventually(what: string, check: () => boolean | Promise<boolean>, ms = 30_000): Promise<void> {
  for (const deadline = Date.now() + ms; !(await check()); await Bun.sleep(100))
    if (Date.now() > deadline) throw new Error(`${what}: not in ${ms} ms`);
}

const session = async (id: string) => (await world.api<Json>("GET", `/v1/sessions/${id}`)).body;
const health = async (id: string) => (await world.api<Json>("GET", `/v1/sessions/${id}/health`)).body;
const hibernated = async (id: string) => (await session(id)).hibernated === true;

async function create(body: Json): Promise<string> {
  const created = await world.api<Json>("POST", "/v1/sessions", {
    workDir: world.workDir,
    reuse: false,
    ...body,
  });
  expect(created.status).toBe(201);
  return created.body.id;
}

/** The requests the model got for this prompt's turn (its first round). */
const turnsOf = (prompt: string) =>
  world.mock.requests().filter((r) => r.kind === "main" && r.round === 0 && r.prompt === prompt);

async function end(...ids: string[]): Promise<void> {
  for (const id of ids) await world.api("DELETE", `/v1/sessions/${id}`);
}

describe.each(["tmux", "acp"] as const)("a Claude Code session on the %s driver", (driver) => {
  let id = "";
  const first = `remember the word ${driver}-amber`;
  const second = `what was the word (${driver})?`;

  test("idle past its hibernate time: its agent ended, the session idle and hibernated", async () => {
    id = await create({ driver, prompt: first, hibernate: AFTER_IDLE });
    await world.waitFor(id, "idle", 60_000);
    const pid = (await health(id)).agentPid as number;
    expect(pid).toBeGreaterThan(0);
    await eventually("hibernated", () => hibernated(id));
    const now = await session(id);
    expect(now).toMatchObject({ status: "idle", hibernated: true, hibernate: AFTER_IDLE });
    await eventually("its agent process gone", () => !isAlive(pid), 10_000);
    expect((await health(id)).agentPid).toBeNull();
    // Its conversation is read from disk.
    const read = (await world.api<Json>("GET", `/v1/sessions/${id}/read`)).body;
    expect(read.status).toBe("idle");
    const cursor = (await world.api<Json>("GET", `/v1/sessions/${id}/transcript/cursor`)).body;
    expect(JSON.stringify(cursor.messages)).toContain(first);
  }, 120_000);

  test("a prompt wakes it: its conversation continued, the prompt delivered once", async () => {
    const sent = await world.api<Json>("POST", `/v1/sessions/${id}/send`, { text: second });
    expect(sent.status).toBe(200);
    expect(sent.body.delivered).toBe(true);
    expect((await session(id)).hibernated).toBe(false);
    await world.waitFor(id, "idle", 60_000);
    const turns = turnsOf(second);
    expect(turns).toHaveLength(1);
    expect(turns[0]!.history).toContain(first);
    expect(turnsOf(first)).toHaveLength(1);
    expect((await health(id)).agentPid).toBeGreaterThan(0);
  }, 120_000);

  test("it hibernates again, and an ag restart keeps it hibernated; a prompt wakes it after", async () => {
    await eventually("hibernated again", () => hibernated(id));
    await world.restart();
    expect(await session(id)).toMatchObject({ status: "idle", hibernated: true });
    const third = `and now (${driver})?`;
    const sent = await world.api<Json>("POST", `/v1/sessions/${id}/send`, { text: third });
    expect(sent.body.delivered).toBe(true);
    await world.waitFor(id, "idle", 60_000);
    expect(turnsOf(third)).toHaveLength(1);
    expect(turnsOf(third)[0]!.history).toEqual(expect.arrayContaining([first, second]));
    await end(id);
  }, 180_000);
});

describe("what stays up", () => {
  test("a session waiting on a permission never hibernates (one idle beside it does)", async () => {
    const waiting = await create({ prompt: "edit file", hibernate: SHORT });
    const idle = await create({ prompt: "say hello", hibernate: SHORT });
    await world.waitFor(waiting, "permission_prompt", 60_000);
    await eventually("the idle one hibernated", () => hibernated(idle), 60_000);
    expect(await session(waiting)).toMatchObject({ status: "permission_prompt", hibernated: false });
    expect((await health(waiting)).alive).toBe(true);
    await end(waiting, idle);
  }, 120_000);

  test("a session watched in a live terminal never hibernates; once the viewer leaves, it does", async () => {
    const watched = await create({ prompt: "say hello", hibernate: SHORT });
    await world.waitFor(watched, "idle", 60_000);
    const socket = new WebSocket(`${world.ag.url.replace("http", "ws")}/v1/sessions/${watched}/terminal`, {
      headers: { authorization: `Bearer ${agToken(world.env)}` },
    } as never);
    const snapshot = new Promise<void>((resolve) =>
      socket.addEventListener("message", (m) => {
        if (typeof m.data === "string" && m.data.includes('"snapshot"')) resolve();
      }),
    );
    await snapshot;
    const beside = await create({ prompt: "say hello", hibernate: SHORT });
    await eventually("the unwatched one hibernated", () => hibernated(beside), 60_000);
    expect((await session(watched)).hibernated).toBe(false);
    expect((await health(watched)).alive).toBe(true);
    socket.close();
    await eventually("hibernated once nobody watches", () => hibernated(watched), 30_000);
    await end(watched, beside);
  }, 120_000);

  test("a pinned session (hibernate: false) stays up under a server default", async () => {
    const pinned = await create({ prompt: "say hello", hibernate: false });
    const idle = await create({ prompt: "say hello" });
    await eventually("the other hibernated", () => hibernated(idle), 60_000);
    expect(await session(pinned)).toMatchObject({ status: "idle", hibernated: false, hibernate: false });
    await end(pinned, idle);
  }, 120_000);
});
