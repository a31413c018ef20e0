import { expect, test } from "bun:test";
import { Value } from "@sinclair/typebox/value";
// Elysia registers the string formats (date-time) the API is checked with.
import "elysia";
import { createHealthService, Health } from "../../src/health/service.ts";

test("health has SPEC's shape and reflects tmux and session counts", async () => {
  let tmux = { healthy: true, error: null as string | null };
  let now = 10_000;
  const health = createHealthService({
    version: "9.9.9",
    startedAt: 4_000,
    tmux: { check: async () => tmux },
    sessions: { stats: () => ({ total: 5, active: 2, idle: 1, stalled: 0, byStatus: {} }) },
    now: () => now,
  });
  const ok = await health.check();
  // The server adds how it is called (`auth`: tests/unit/auth.test.ts).
  expect(Value.Check(Health, { ...ok, auth: "token" })).toBe(true);
  expect(ok).toEqual({
    status: "ok",
    version: "9.9.9",
    platform: process.platform,
    uptime: 6,
    sessions: { active: 2, total: 5 },
    tmux: { healthy: true, error: null },
    storage: { healthy: true, error: null, code: null },
    memory: null,
    timestamp: new Date(10_000).toISOString(),
  });
  tmux = { healthy: false, error: "tmux not found (tmux)" };
  now = 12_345;
  const degraded = await health.check();
  expect(degraded.status).toBe("degraded");
  expect(degraded.tmux).toEqual({ healthy: false, error: "tmux not found (tmux)" });
  expect(degraded.uptime).toBe(8.35);
});

test("health names the host's memory headroom, the reserve and what the agents use", async () => {
  const MB = 1024 * 1024;
  const health = createHealthService({
    version: "9.9.9",
    startedAt: 0,
    tmux: { check: async () => ({ healthy: true, error: null }) },
    sessions: { stats: () => ({ total: 0, active: 0, idle: 0, stalled: 0, byStatus: {} }) },
    memory: { reserveMb: 1024, available: async () => 6000.7 * MB, agentsRss: async () => 412.4 * MB },
  });
  const answer = await health.check();
  expect(Value.Check(Health, { ...answer, auth: "local" })).toBe(true);
  expect(answer.memory).toEqual({ availableMb: 6000, reserveMb: 1024, agentsRssMb: 412 });
});

test("health answers when the memory figures cannot be read (tmux down, no /proc)", async () => {
  const health = createHealthService({
    version: "9.9.9",
    startedAt: 0,
    tmux: { check: async () => ({ healthy: false, error: "tmux is not connected" }) },
    sessions: { stats: () => ({ total: 1, active: 1, idle: 0, stalled: 0, byStatus: {} }) },
    memory: {
      reserveMb: 1024,
      available: async () => {
        throw new Error("no /proc");
      },
      agentsRss: async () => {
        throw new Error("tmux is not connected");
      },
    },
  });
  const answer = await health.check();
  expect(answer.status).toBe("degraded");
  expect(answer.memory).toBeNull();
});
