import { describe, expect, test } from "bun:test";
import { createAdmission, createAdmissionQueue, DEFAULT_AGENT_BYTES } from "../../src/host/index.ts";
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
