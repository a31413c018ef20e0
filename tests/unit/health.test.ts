import { expect, test } from "bun:test";
import { Value } from "@sinclair/typebox/value";
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
  expect(Value.Check(Health, ok)).toBe(true);
  expect(ok).toEqual({
    status: "ok",
    version: "9.9.9",
    platform: process.platform,
    uptime: 6,
    sessions: { active: 2, total: 5 },
    tmux: { healthy: true, error: null },
    timestamp: new Date(10_000).toISOString(),
  });
  tmux = { healthy: false, error: "tmux not found (tmux)" };
  now = 12_345;
  const degraded = await health.check();
  expect(degraded.status).toBe("degraded");
  expect(degraded.tmux).toEqual({ healthy: false, error: "tmux not found (tmux)" });
  expect(degraded.uptime).toBe(8.35);
});
