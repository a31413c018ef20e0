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
import { until } from "../helpers/until.ts";

const MB = 1024 * 1024;

describe("admission by memory", () => {
  test("one more agent must fit above the reserve; before any was measured, the default is expected", async () => {
    let available = 2000 * MB;
    let running: Array<{ id: string; agent: string; rssBytes: number }> = [];
    const admission = createAdmission({
      reserveMb: 1000,
      available: async () => available,
      running: async () => running,
    });
    expect(admission.expected("claude")).toBe(DEFAULT_AGENT_BYTES);
    (await admission.reserve("claude")).release(); // 2000 - 512 ≥ 1000
    available = 1400 * MB;
    const refused = await admission.reserve("claude").catch((e) => e);
    expect(refused).toMatchObject({ code: "HOST_MEMORY_LOW", retryAfterSeconds: 30 });
    expect(refused.message).toContain("1400 MB available");
    expect(refused.message).toContain("1000 MB are kept free");
    // Measured agents teach what one more takes: small codex agents fit where the default did not.
    running = [{ id: "s1", agent: "codex", rssBytes: 200 * MB }];
    (await admission.reserve("codex")).release();
    expect(admission.expected("codex")).toBe(200 * MB);
    running = [{ id: "s1", agent: "codex", rssBytes: 300 * MB }];
    await admission.reserve("codex");
    expect(admission.expected("codex")).toBe(230 * MB); // a weighted mean moves 30 % toward a new measure
  });

  test("reserve 0 turns it off; without /proc nothing is refused", async () => {
    const off = createAdmission({ reserveMb: 0, available: async () => 0, running: async () => [] });
    await off.reserve("claude");
    await off.reserve("claude");
    const blind = createAdmission({ reserveMb: 1000, available: async () => null, running: async () => [] });
    await blind.reserve("claude");
    await blind.reserve("claude");
  });

  test("a refused create is 503 HOST_MEMORY_LOW with Retry-After, and nothing starts", async () => {
    const admission = createAdmission({
      reserveMb: 1000,
      available: async () => 100 * MB,
      running: async () => [],
    });
    const app = testApp({ admission: (agent) => admission.reserve(agent) });
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

describe("launches hold their room until their agent has started", () => {
  test("concurrent reserves against room for one: exactly one is admitted, 4 or 20 at once", async () => {
    for (const count of [4, 20]) {
      // Each look takes a while (as reading tmux and /proc does): all of them overlap.
      const admission = createAdmission({
        reserveMb: 1000,
        available: async () => {
          await Bun.sleep(5);
          return 1600 * MB; // one more (512 MB expected) leaves 1088 MB; two would leave 576
        },
        running: async () => [],
      });
      const tries = await Promise.allSettled(
        Array.from({ length: count }, () => admission.reserve("claude")),
      );
      expect(tries.filter((t) => t.status === "fulfilled")).toHaveLength(1);
      const refused = tries.flatMap((t) => (t.status === "rejected" ? [t.reason] : []));
      expect(refused).toHaveLength(count - 1);
      for (const error of refused) {
        expect(error).toMatchObject({ code: "HOST_MEMORY_LOW", retryAfterSeconds: 30 });
        expect(error.message).toContain("512 MB of it held for an agent still starting");
      }
      expect(admission.holding()).toEqual([{ agent: "claude", sessionId: null, bytes: 512 * MB }]);
    }
  });

  test("a hold shrinks by what its agent takes already, and ends when the agent started or the launch failed", async () => {
    let available = 1600 * MB;
    let running: Array<{ id: string; agent: string; rssBytes: number }> = [];
    let freed = 0;
    const admission = createAdmission({
      reserveMb: 1000,
      available: async () => available,
      running: async () => running,
      freed: () => freed++,
    });
    const first = await admission.reserve("claude");
    first.bind("s1");
    // Its agent is starting: 5 MB so far, which the host's reading already shows.
    running = [{ id: "s1", agent: "claude", rssBytes: 5 * MB }];
    available = 1595 * MB;
    expect(await admission.reserve("claude").catch((e) => e.code)).toBe("HOST_MEMORY_LOW");
    expect(admission.holding()).toEqual([{ agent: "claude", sessionId: "s1", bytes: 507 * MB }]);
    // A starting agent teaches nothing of what one more takes.
    expect(admission.expected("claude")).toBe(DEFAULT_AGENT_BYTES);

    // Started: it takes 300 MB, the host shows it, and the hold is gone.
    running = [{ id: "s1", agent: "claude", rssBytes: 300 * MB }];
    available = 1300 * MB;
    admission.started("s1");
    expect([admission.holding(), freed]).toEqual([[], 1]);
    const second = await admission.reserve("claude"); // 1300 - 300 (learnt) ≥ 1000
    expect(admission.expected("claude")).toBe(300 * MB);
    expect(await admission.reserve("claude").catch((e) => e.code)).toBe("HOST_MEMORY_LOW");
    // Its launch failed: the room is back at once (released twice: once counts).
    second.release();
    second.release();
    expect(freed).toBe(2);
    (await admission.reserve("claude")).release();
  });

  test("the guard's queue looks again when a launch gives its room back", async () => {
    const guard = createHostGuard({
      reserveMb: 1000,
      running: async () => [],
      report: () => {},
      available: async () => 1600 * MB,
    });
    const first = await guard.admit("claude");
    let admitted = false;
    const waiting = guard.admit("claude", "batch").then((room) => {
      admitted = true;
      return room;
    });
    await until(async () => (await guard.state()).waiting.length === 1);
    expect((await guard.state()).starting).toEqual([{ agent: "claude", sessionId: null, heldMb: 512 }]);
    expect(admitted).toBe(false);
    first.bind("s1");
    guard.agentStarted("s1"); // not the 30 s retry: the queue is poked
    (await waiting).bind("s2");
    expect((await guard.state()).starting).toEqual([{ agent: "claude", sessionId: "s2", heldMb: 512 }]);
    guard.close();
  });
});

describe("the admission queue", () => {
  const refusing = (room: { free: boolean }, tried: string[]) => ({
    async reserve(agent: string) {
      tried.push(agent);
      if (!room.free) throw new AgError("HOST_MEMORY_LOW", "no room", { retryAfterSeconds: 30 });
      return { bind() {}, release() {} };
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
      admission: (agent, waitAs) => (waitAs ? queue.enter(agent, waitAs) : refusing(room, []).reserve(agent)),
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
