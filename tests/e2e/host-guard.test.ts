import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { availableBytes } from "../../src/host/index.ts";
import { readHostMemory } from "../../src/host/procfs.ts";
import { type AgentWorld, startAgentWorld } from "../helpers/agent-world.ts";

// biome-ignore lint/suspicious/noExplicitAny: response bodies are inspected field by field
type Json = Record<string, any>;

/**
 * The host guard with REAL Claude Code agents through the compiled binary and the mock model:
 * the reserve (SVC_MEMORY_RESERVE_MB) is set from what this host has free now so that exactly one
 * more agent fits; the one after is refused, and a batch waits until sessions are killed.
 *
 * A Claude Code agent at rest takes ~300 MB of RSS, but a new one lowers MemAvailable by anything
 * from ~100 to ~350 MB (its binary's pages are shared and cached), and other tests on the machine
 * move MemAvailable by hundreds of MB: with agents at rest no reserve leaves room for exactly
 * one. So the agents are made heavy the way a working agent is: each runs a command (the mock's
 * "run cmd:") that holds BALLAST_MB of memory in the agent's own process tree. One more is then
 * expected to take ~BALLAST_MB + 300 MB, the reserve (available − 1.5 × that) leaves half an
 * agent (~750 MB) on either side of each decision, and killing the three frees ~4 GB for the
 * queued batch. At most 3 agent processes at a time (and ~4.5 GB for a few seconds).
 */
const MB = 1024 * 1024;
const BALLAST_MB = 1280;

let world: AgentWorld;
let base: string;
/** What the host can still give now (MB), read as ag's admission reads it. */
const hostAvailableMb = async () => Math.floor(availableBytes((await readHostMemory())!) / MB);

beforeAll(async () => {
  // Admission on (it learns what an agent takes at every create) but out of the way: 1 MB.
  world = await startAgentWorld({
    SVC_MEMORY_RESERVE_MB: "1",
    SVC_IDLE_TIMEOUT_MS: "0",
    // The ballast command runs for the whole test: Claude Code's Bash tool must not time it out.
    BASH_DEFAULT_TIMEOUT_MS: "600000",
    BASH_MAX_TIMEOUT_MS: "600000",
  });
  base = `http://127.0.0.1:${world.env.SVC_PORT}`;
  // Holds BALLAST_MB (written, so resident, and referenced to the end, so never collected) and
  // records its pid. Claude Code runs each Bash command in a session of its own (setsid), so the
  // hang-up of a killed session's window never reaches it: ag ends it (host/strays.ts), and the
  // last test checks that it did. 5 minutes at most, should ag not.
  writeFileSync(
    join(world.workDir, "ballast.mjs"),
    [
      'import { writeFileSync } from "node:fs";',
      // Its pid first: the session is taken as heavy once its tree's RSS holds the ballast, which
      // can be before the last pages are filled (under load, seen in CI: the file came too late).
      `writeFileSync(${JSON.stringify(join(world.workDir, "ballast-"))} + process.pid, "");`,
      `const held = Buffer.alloc(${BALLAST_MB} * 1024 * 1024, 1);`,
      "setInterval(() => held[held.length - 1] !== 1 && process.exit(0), 1000);",
      "setTimeout(() => process.exit(0), 300_000);",
    ].join("\n"),
  );
}, 120_000);
afterAll(async () => {
  await world?.stop();
});

const ids: Record<string, string> = {};

/** A process still running (a zombie's memory is already given back). */
function running(pid: number): boolean {
  try {
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, "utf8"));
  } catch {
    return false;
  }
}

/** Polls `look` until it answers something (not null or false); throws `message` after `timeoutMs`. */
async function poll<T>(
  look: () => Promise<T | null | false>,
  timeoutMs: number,
  message: string,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const seen = await look();
    if (seen !== null && seen !== false) return seen;
    await Bun.sleep(250);
  }
  throw new Error(`${message}; ag's last log lines:\n${world.ag.stderr().split("\n").slice(-15).join("\n")}`);
}

async function create(body: Json): Promise<{ status: number; retryAfter: string | null; body: Json }> {
  const response = await fetch(`${base}/v1/sessions`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${world.ag.token()}` },
    body: JSON.stringify({ reuse: false, ...body }),
  });
  return {
    status: response.status,
    retryAfter: response.headers.get("retry-after"),
    body: await response.json(),
  };
}

/** A new session whose agent holds BALLAST_MB in its process tree, once it holds it. */
async function heavySession(name: string): Promise<string> {
  const created = await create({
    name,
    workDir: world.workDir,
    permissionMode: "bypassPermissions",
    prompt: `run cmd: ${process.execPath} ${join(world.workDir, "ballast.mjs")}`,
  });
  expect([created.status, created.body.code]).toEqual([201, undefined]);
  const id = created.body.id as string;
  await poll(
    async () => {
      const metrics = (await world.api<Json>("GET", `/v1/sessions/${id}/metrics`)).body;
      return (metrics.agentProcess?.rssBytes ?? 0) >= BALLAST_MB * MB;
    },
    90_000,
    `${name}'s agent never held its ballast`,
  );
  return id;
}

test("health shows the headroom and what the running agents take", async () => {
  ids.a = await heavySession("heavy-a");
  const health = (await world.api<Json>("GET", "/v1/health")).body;
  expect(health.memory.reserveMb).toBe(1);
  expect(health.memory.agentsRssMb).toBeGreaterThanOrEqual(BALLAST_MB);
  // ag's reading and ours, a moment apart, on a machine others use too.
  expect(Math.abs(health.memory.availableMb - (await hostAvailableMb()))).toBeLessThan(2048);
  const metrics = (await world.api<Json>("GET", `/v1/sessions/${ids.a}/metrics`)).body;
  expect(metrics.agentProcess).toMatchObject({ pid: expect.any(Number), cpuPercent: expect.any(Number) });
  expect(metrics.agentProcess.processes).toBeGreaterThanOrEqual(2); // the agent and its command
}, 150_000);

let reserveMb = 0;

test("a reserve with room for exactly one more agent: the first create starts, the next is refused with 503 HOST_MEMORY_LOW and Retry-After", async () => {
  // The second create measures the first agent: from then on ag expects one more to be heavy.
  ids.b = await heavySession("heavy-b");
  const expectedMb = (await world.api<Json>("GET", "/v1/admission")).body.expectedMb.claude as number;
  expect(expectedMb).toBeGreaterThanOrEqual(BALLAST_MB);

  // ag again (the agents keep running) with room for one more and half an agent to spare: the
  // next heavy agent fits with expectedMb / 2 to spare, the one after lacks as much.
  reserveMb = Math.max(1, Math.floor((await hostAvailableMb()) - 1.5 * expectedMb));
  world.env.SVC_MEMORY_RESERVE_MB = String(reserveMb);
  await world.restart();
  await world.waitFor(ids.a!, "working", 30_000);
  const health = (await world.api<Json>("GET", "/v1/health")).body;
  expect(health.memory.reserveMb).toBe(reserveMb);
  expect(health.memory.agentsRssMb).toBeGreaterThanOrEqual(2 * BALLAST_MB);
  expect(health.memory.availableMb - reserveMb).toBeGreaterThan(expectedMb);

  ids.c = await heavySession("heavy-c"); // admitted (201): three agents now, the most this test runs
  const refused = await create({ workDir: world.workDir, prompt: "say hello" });
  expect([refused.status, refused.body.code, refused.retryAfter]).toEqual([503, "HOST_MEMORY_LOW", "30"]);
  expect(refused.body.error).toContain(`${reserveMb} MB are kept free`);
  // Nothing started: still the three heavy sessions only.
  const running = (await world.api<Json[]>("GET", "/v1/sessions?status=running")).body;
  expect(running.map((s) => s.name).sort()).toEqual(["heavy-a", "heavy-b", "heavy-c"]);
  // The refused create measured the running agents again: one more is still expected heavy.
  const admission = (await world.api<Json>("GET", "/v1/admission")).body;
  expect(admission).toMatchObject({ reserveMb, waiting: [] });
  expect(admission.expectedMb.claude).toBeGreaterThanOrEqual(BALLAST_MB);
  expect(admission.availableMb - reserveMb).toBeLessThan(admission.expectedMb.claude);
}, 200_000);

test("a batch beyond the headroom waits in the queue and completes as the heavy sessions are killed", async () => {
  const dirs = ["queued-1", "queued-2"].map((name) => {
    const workDir = join(world.workDir, name);
    mkdirSync(workDir);
    return { name, workDir, prompt: "say hello" };
  });
  const startedAt = Date.now();
  let answered = false;
  const batch = world.api<Json>("POST", "/v1/sessions/batch", { sessions: dirs }).finally(() => {
    answered = true;
  });
  const queued = await poll(
    async () => {
      const waiting = (await world.api<Json>("GET", "/v1/admission")).body.waiting as Json[];
      return waiting.length === 2 ? waiting : null;
    },
    10_000,
    "the batch's items never showed in GET /v1/admission",
  );
  expect(queued.map((w) => [w.agent, w.for])).toEqual([
    ["claude", "batch"],
    ["claude", "batch"],
  ]);
  await Bun.sleep(1000);
  expect(answered).toBe(false);

  // Killing the heavy sessions frees ~3 × what one takes: room for both (2 agents then). Their
  // ballast, in sessions of its own, is ended by ag once each agent has exited.
  const ballasts = readdirSync(world.workDir)
    .filter((f) => f.startsWith("ballast-"))
    .map((f) => Number(f.slice("ballast-".length)));
  expect(ballasts).toHaveLength(3);
  expect(ballasts.every(running)).toBe(true);
  for (const id of [ids.a!, ids.b!, ids.c!])
    expect((await world.api("DELETE", `/v1/sessions/${id}`)).status).toBe(200);
  const done = await batch;
  expect([done.status, done.body.failed]).toEqual([200, []]);
  expect((done.body.created as Json[]).map((s) => s.name).sort()).toEqual(["queued-1", "queued-2"]);
  // Woken when the sessions ended (1 s and 3 s later), not by the 30 s retry.
  expect(Date.now() - startedAt).toBeLessThan(25_000);
  expect((await world.api<Json>("GET", "/v1/admission")).body.waiting).toEqual([]);
  await poll(async () => !ballasts.some(running), 20_000, "a killed session's command outlived it");
  for (const s of done.body.created as Json[]) {
    await world.waitFor(s.id, "idle", 60_000);
    const health = (await world.api<Json>("GET", "/v1/health")).body;
    expect(health.memory.agentsRssMb).toBeGreaterThan(0);
  }
  for (const s of done.body.created as Json[])
    expect((await world.api("DELETE", `/v1/sessions/${s.id}`)).status).toBe(200);
}, 150_000);
