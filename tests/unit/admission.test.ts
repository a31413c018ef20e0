import { describe, expect, test } from "bun:test";
import {
  createAdmission,
  createAdmissionQueue,
  createHostGuard,
  createPressureWatch,
  DEFAULT_AGENT_BYTES,
} from "../../src/host/index.ts";
import { AgError } from "../../src/shared/errors.ts";
import { testApp } from "../helpers/app.ts";
import { simulateAgents } from "../helpers/simulated-agent.ts";
import { tempDir } from "../helpers/temp.ts";

const MB = 1024 * 1024;

describe("admission by memory", () => {
  test("one more agent must fit above the reserve; before any was measured, the default is expected", async () => {
    let available = 2000 * MB;
    let running: Array<{ agent: string; rssBytes: number }> = [];
    const admission = createAdmission({
      reserveMb: 1000,
      available: async () => available,
      running: async () => running,
    });
    expect(admission.expected("claude")).toBe(DEFAULT_AGENT_BYTES);
    await admission.check("claude"); // 2000 - 512 ≥ 1000
    available = 1400 * MB;
    const refused = await admission.check("claude").catch((e) => e);
    expect(refused).toMatchObject({ code: "HOST_MEMORY_LOW", retryAfterSeconds: 30 });
    expect(refused.message).toContain("1400 MB available");
    expect(refused.message).toContain("1000 MB are kept free");
    // Measured agents teach what one more takes: small codex agents fit where the default did not.
    running = [{ agent: "codex", rssBytes: 200 * MB }];
    await admission.check("codex");
    expect(admission.expected("codex")).toBe(200 * MB);
    running = [{ agent: "codex", rssBytes: 300 * MB }];
    await admission.check("codex");
    expect(admission.expected("codex")).toBe(230 * MB); // a weighted mean moves 30 % toward a new measure
  });

  test("reserve 0 turns it off; without /proc nothing is refused", async () => {
    const off = createAdmission({ reserveMb: 0, available: async () => 0, running: async () => [] });
    await off.check("claude");
    const blind = createAdmission({ reserveMb: 1000, available: async () => null, running: async () => [] });
    await blind.check("claude");
  });

  test("a refused create is 503 HOST_MEMORY_LOW with Retry-After, and nothing starts", async () => {
    const admission = createAdmission({
      reserveMb: 1000,
      available: async () => 100 * MB,
      running: async () => [],
    });
    const app = testApp({ admission: (agent) => admission.check(agent) });
    simulateAgents(app);
    const response = await app.request("POST", "/v1/sessions", {
      body: { workDir: tempDir(), prompt: "hello" },
    });
    expect(response.status).toBe(503);
    expect(response.headers.get("retry-after")).toBe("30");
    expect(((await response.json()) as { code: string }).code).toBe("HOST_MEMORY_LOW");
    expect(app.repo.list()).toEqual([]);
    expect(app.tmux.server.windows.size).toBe(0);
  });
});

describe("the admission queue", () => {
  const refusing = (room: { free: boolean }, tried: string[]) => ({
    async check(agent: string) {
      tried.push(agent);
      if (!room.free) throw new AgError("HOST_MEMORY_LOW", "no room", { retryAfterSeconds: 30 });
    },
  });

  test("with room nobody waits; without, creates wait in order and go when poked, first come first served", async () => {
    const room = { free: true };
    const tried: string[] = [];
    const queue = createAdmissionQueue({ admission: refusing(room, tried), maxWaiting: 10, retryMs: 60_000 });
    await queue.enter("claude", "batch");
    room.free = false;
    const order: string[] = [];
    const first = queue.enter("opencode", "pipeline:p1").then(() => order.push("opencode"));
    const second = queue.enter("claude", "batch").then(() => order.push("claude"));
    await Bun.sleep(10);
    expect(queue.waiting().map((w) => [w.agent, w.for])).toEqual([
      ["opencode", "pipeline:p1"],
      ["claude", "batch"],
    ]);
    queue.poke(); // still no room: the head is tried again, nobody goes
    await Bun.sleep(10);
    expect(order).toEqual([]);
    room.free = true;
    queue.poke();
    await Promise.all([first, second]);
    expect(order).toEqual(["opencode", "claude"]);
    expect(queue.waiting()).toEqual([]);
  });

  test("a full queue refuses at once; a retry timer tries the head without a poke; close fails the waiters", async () => {
    const room = { free: false };
    const queue = createAdmissionQueue({ admission: refusing(room, []), maxWaiting: 1, retryMs: 50 });
    const waiting = queue.enter("claude", "batch");
    expect(await queue.enter("claude", "batch").catch((e) => e.code)).toBe("HOST_MEMORY_LOW");
    room.free = true;
    await waiting; // the timer's try, 50 ms on
    room.free = false;
    const stopped = queue.enter("claude", "consensus:c1").catch((e) => e.message);
    queue.close();
    expect(await stopped).toBe("ag is stopping");
  });

  test("after a session ends the guard looks again once its agent has had time to exit", async () => {
    let available = 600 * MB; // one more agent (512 MB expected) would dip below the 100 MB reserve
    const guard = createHostGuard({
      reserveMb: 100,
      running: async () => [],
      report: () => {},
      available: async () => available,
    });
    let admitted = false;
    const waiting = guard.admit("claude", "batch").then(() => {
      admitted = true;
    });
    await Bun.sleep(20);
    expect((await guard.state()).waiting.map((w) => w.for)).toEqual(["batch"]);
    guard.sessionEnded(); // the window closed; its agent still holds the memory
    await Bun.sleep(100);
    expect(admitted).toBe(false);
    available = 2000 * MB; // the agent exited
    await waiting; // the look a second on, not the 30 s retry
    expect((await guard.state()).waiting).toEqual([]);
    guard.close();
  });

  test("a batch beyond the headroom waits instead of failing, and its items start as room comes back", async () => {
    const room = { free: true };
    const queue = createAdmissionQueue({ admission: refusing(room, []), maxWaiting: 10, retryMs: 60_000 });
    const app = testApp({
      admission: (agent, waitAs) => (waitAs ? queue.enter(agent, waitAs) : refusing(room, []).check(agent)),
    });
    simulateAgents(app);
    room.free = false;
    const batch = app.request("POST", "/v1/sessions/batch", {
      body: { sessions: [{ workDir: tempDir() }, { workDir: tempDir() }] },
    });
    await Bun.sleep(50);
    expect(queue.waiting().map((w) => w.for)).toEqual(["batch", "batch"]);
    expect(app.repo.list()).toEqual([]);
    room.free = true;
    queue.poke();
    const body = (await (await batch).json()) as { created: unknown[]; failed: unknown[] };
    expect([body.created.length, body.failed]).toEqual([2, []]);
  });
});

describe("memory pressure while sessions run", () => {
  test("one note naming the heaviest sessions when headroom falls below the reserve, again only after recovery", async () => {
    let available = 5000 * MB;
    let now = 0;
    const notes: string[] = [];
    const watch = createPressureWatch({
      reserveMb: 1000,
      available: async () => available,
      running: async () => [
        { id: "aaaaaaaa-1", name: "small", agent: "codex", rssBytes: 200 * MB },
        { id: "bbbbbbbb-2", name: "big", agent: "opencode", rssBytes: 900 * MB },
        { id: "cccccccc-3", name: "mid", agent: "claude", rssBytes: 400 * MB },
        { id: "dddddddd-4", name: "tiny", agent: "claude", rssBytes: 100 * MB },
      ],
      report: (detail) => notes.push(detail),
      minIntervalMs: 1000,
      now: () => now,
    });
    await watch.look();
    expect(notes).toEqual([]);
    available = 800 * MB;
    now = 500;
    await watch.look(); // too soon after the last look
    expect(notes).toEqual([]);
    now = 2000;
    await watch.look();
    expect(notes).toEqual([
      "host memory below the reserve: 800 MB available, 1000 MB kept free; heaviest sessions: big (opencode, 900 MB, bbbbbbbb), mid (claude, 400 MB, cccccccc), small (codex, 200 MB, aaaaaaaa)",
    ]);
    now = 4000;
    await watch.look(); // still under: no second note
    available = 3000 * MB;
    now = 6000;
    await watch.look();
    available = 700 * MB;
    now = 8000;
    await watch.look();
    expect(notes).toHaveLength(2);
  });
});
