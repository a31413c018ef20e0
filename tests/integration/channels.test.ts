import { afterAll, describe, expect, test } from "bun:test";
import { startTestRuntime } from "../helpers/runtime.ts";

/** Two real receivers: one never answers, one answers at once. */
const fast: number[] = [];
const fastServer = Bun.serve({
  port: 0,
  hostname: "127.0.0.1",
  fetch: () => {
    fast.push(Date.now());
    return new Response("ok");
  },
});
const hanging = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Promise<Response>(() => {}) });
afterAll(() => {
  fastServer.stop(true);
  hanging.stop(true);
});

describe("channels in the runtime", () => {
  test("a webhook that hangs does not delay another one; health shows both", async () => {
    const runtime = await startTestRuntime({
      SVC_WEBHOOKS: JSON.stringify([
        { url: `http://127.0.0.1:${hanging.port}/slow`, timeoutMs: 3_000 },
        { url: `http://127.0.0.1:${fastServer.port}/fast` },
      ]),
    });
    try {
      const started = Date.now();
      for (let i = 0; i < 10; i++) runtime.bus.publish({ event: "session.created", detail: `n${i}` });
      const deadline = Date.now() + 2_000;
      while (fast.length < 10 && Date.now() < deadline) await Bun.sleep(10);
      expect(fast).toHaveLength(10);
      expect(Math.max(...fast) - started).toBeLessThan(2_000);
      const health = await (await fetch(`${runtime.url}/v1/channels/health`)).json();
      expect(health).toEqual([
        expect.objectContaining({ channel: "webhook", pendingCount: 10, lastError: null, healthy: true }),
      ]);
    } finally {
      await runtime.drain(100);
      runtime.close();
    }
  });

  test("no channel configured: empty health, empty dead letters, retry is a 409, a bad channel a 400", async () => {
    const runtime = await startTestRuntime();
    try {
      expect(await (await fetch(`${runtime.url}/v1/channels/health`)).json()).toEqual([]);
      expect(await (await fetch(`${runtime.url}/v1/webhooks/dead-letter`)).json()).toEqual([]);
      const retry = await fetch(`${runtime.url}/v1/channels/email/dead-letters/retry`, { method: "POST" });
      expect(retry.status).toBe(409);
      const bad = await fetch(`${runtime.url}/v1/channels/pigeon/dead-letters`, { method: "DELETE" });
      expect(bad.status).toBe(400);
    } finally {
      await runtime.drain(100);
      runtime.close();
    }
  });
});
