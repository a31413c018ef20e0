import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { type AgentWorld, startAgentWorld } from "../helpers/agent-world.ts";

// biome-ignore lint/suspicious/noExplicitAny: response bodies are inspected field by field
type Json = Record<string, any>;

/**
 * The server side of using ag every day, on the REAL agent CLI through the compiled binary:
 * reuse only as asked, answers that return the session after the answer, and a terminal that
 * says what each session does. The tests run in order in one world, at most three agents at once.
 */
let world: AgentWorld;
/** The session the later tests work in (named "other"). */
let other: string;

beforeAll(async () => {
  world = await startAgentWorld();
}, 60_000);
afterAll(async () => {
  await world?.stop();
});

async function create(body: Json): Promise<{ status: number; body: Json }> {
  return world.api<Json>("POST", "/v1/sessions", { workDir: world.workDir, prompt: "say hello", ...body });
}

/** The server's log lines about one session, without their time stamp. */
function logLines(id: string): string[] {
  return world.ag
    .stderr()
    .split("\n")
    .filter((l) => l.includes(`(${id.slice(0, 8)})`) || l.includes(`-${id.slice(0, 8)}:`))
    .map((l) => l.replace(/^\S+ /, ""));
}

describe("reuse is never a surprise", () => {
  test("reuse:false twice → two new sessions; another name → new; the same name or none → reused", async () => {
    const first = await create({ reuse: false });
    expect(first.status).toBe(201);
    expect(first.body).toMatchObject({ reused: false, promptDelivery: { delivered: true } });
    await world.waitFor(first.body.id, "idle", 60_000);

    const second = await create({ reuse: false });
    expect(second.status).toBe(201);
    expect(second.body.reused).toBe(false);
    expect(second.body.id).not.toBe(first.body.id);
    await world.waitFor(second.body.id, "idle", 60_000);

    const named = await create({ name: "other" });
    expect(named.status).toBe(201);
    expect(named.body).toMatchObject({ reused: false, name: "other" });
    expect([first.body.id, second.body.id]).not.toContain(named.body.id);
    other = named.body.id;
    await world.waitFor(other, "idle", 60_000);

    // Fewer agents at once: the two unnamed ones have shown what they had to.
    for (const id of [first.body.id, second.body.id])
      expect((await world.api("DELETE", `/v1/sessions/${id}`)).status).toBe(200);

    const sameName = await create({ name: "other" });
    expect(sameName.status).toBe(200);
    expect(sameName.body).toMatchObject({ id: other, reused: true, name: "other" });
    await world.waitFor(other, "idle", 60_000);
    const noName = await create({});
    expect(noName.status).toBe(200);
    expect(noName.body).toMatchObject({ id: other, reused: true });
    await world.waitFor(other, "idle", 60_000);
    expect(world.prompts()).toEqual(Array(5).fill("say hello"));
  }, 180_000);
});

describe("answers return the session after the answer", () => {
  async function waitingFor(text: string, status: string): Promise<Json> {
    const sent = await world.api<Json>("POST", `/v1/sessions/${other}/send`, { text });
    expect(sent.body).toEqual({ delivered: true, attempts: 1 });
    return world.waitFor(other, status, 60_000);
  }
  const get = async () => (await world.api<Json>("GET", `/v1/sessions/${other}`)).body;

  test('approve of "edit file": pendingPermission null, working; GET agrees; the file is written', async () => {
    const waiting = await waitingFor("edit file", "permission_prompt");
    expect(waiting.pendingPermission).toMatchObject({ kind: "tool", tool: "Write" });
    const approved = await world.api<Json>("POST", `/v1/sessions/${other}/approve`, {
      permissionId: waiting.pendingPermission.id,
    });
    expect(approved.status).toBe(200);
    expect(approved.body).toMatchObject({ id: other, status: "working", pendingPermission: null });
    const after = await get();
    expect(after.pendingPermission).toBeNull();
    expect(after.status).not.toBe("permission_prompt");
    await world.waitFor(other, "idle", 60_000);
    expect(existsSync(join(world.workDir, "hello.txt"))).toBe(true);
  }, 90_000);

  test('answer of "ask me": pendingPermission null, working; GET agrees', async () => {
    const asking = await waitingFor("ask me", "asking");
    const answered = await world.api<Json>("POST", `/v1/sessions/${other}/answer`, {
      option: 2,
      permissionId: asking.pendingPermission.id,
    });
    expect(answered.status).toBe(200);
    expect(answered.body).toMatchObject({ status: "working", pendingPermission: null });
    const after = await get();
    expect(after.pendingPermission).toBeNull();
    expect(after.status).not.toBe("asking");
    await world.waitFor(other, "idle", 60_000);
  }, 90_000);

  test("reject: pendingPermission null, idle (the turn ends); the command never runs", async () => {
    await waitingFor("run cmd: touch rejected.txt", "permission_prompt");
    const rejected = await world.api<Json>("POST", `/v1/sessions/${other}/reject`);
    expect(rejected.status).toBe(200);
    expect(rejected.body).toMatchObject({ status: "idle", pendingPermission: null });
    expect(await get()).toMatchObject({ status: "idle", pendingPermission: null });
    await Bun.sleep(500);
    expect(existsSync(join(world.workDir, "rejected.txt"))).toBe(false);
  }, 90_000);
});

describe("the server's terminal", () => {
  test("one line per session event, each once", async () => {
    const lines = logLines(other);
    const at = (text: string) => lines.filter((l) => l.includes(text));
    expect(at(`INFO  session other (${other.slice(0, 8)}): created in ${world.workDir}`)).toHaveLength(1);
    expect(at("waits for permission: Write: ")).toHaveLength(1);
    expect(at("waits for an answer: Which color should the button be? — 1. Red · 2. Blue")).toHaveLength(1);
    expect(at("waits for permission: Bash: touch rejected.txt")).toHaveLength(1);
    expect(at("idle (ready)")).toHaveLength(1);
    // Three "say hello" turns, "edit file" and "ask me"; the rejected one was interrupted.
    expect(at("idle (turn completed)")).toHaveLength(5);
    expect(at("idle (turn interrupted)")).toHaveLength(1);
    const killed = world.ag
      .stderr()
      .split("\n")
      .filter((l) => l.includes("ended (killed)"));
    expect(killed).toHaveLength(2);
  });
});
