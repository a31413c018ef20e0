import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createHmac } from "node:crypto";
import { type AgentWorld, startAgentWorld } from "../helpers/agent-world.ts";
import { compiledBinary, freePort, runAg } from "../helpers/binary.ts";

// biome-ignore lint/suspicious/noExplicitAny: response bodies are inspected field by field
type Json = Record<string, any>;

/**
 * Webhooks through the compiled binary, with a real agent session as the source of events: a
 * receiver that is down (nothing listens), then unavailable (503) → 4 attempts → a dead letter
 * that survives kill -9 of ag → `ag channels dlq retry webhook` delivers it, signed, with its
 * original delivery id.
 */
const port = freePort();
let world: AgentWorld;
let server: ReturnType<typeof Bun.serve> | undefined;

beforeAll(async () => {
  world = await startAgentWorld({
    SVC_WEBHOOKS: JSON.stringify([
      { url: `http://127.0.0.1:${port}/hook`, secret: "s3cret", events: ["session.created"] },
    ]),
  });
}, 60_000);
afterAll(async () => {
  server?.stop(true);
  await world?.stop();
});

async function until<T>(what: string, check: () => Promise<T | undefined>, ms = 45_000): Promise<T> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    const value = await check();
    if (value !== undefined) return value;
    await Bun.sleep(200);
  }
  throw new Error(`timed out waiting for ${what}`);
}

describe("webhook dead letters on the compiled binary", () => {
  test("down receiver → retries → dead letter → kill -9 → dlq retry delivers it signed", async () => {
    const created = await world.api<Json>("POST", "/v1/sessions", { workDir: world.workDir });
    expect(created.status).toBe(201);

    // The first try finds nothing listening (a request that fails is retried after ag's own
    // back-off, 1 s ±20 %). Then the receiver answers 503 with Retry-After: 0, which ag honours
    // over its 4 s and 16 s (their schedule is tests/unit/dispatcher.test.ts's, on a fake clock):
    // the fourth try fails too.
    await until("the first try failed", async () => {
      const { body } = await world.api<Json[]>("GET", "/v1/channels/health");
      return body[0]?.healthy === false ? body : undefined;
    });
    const received: Array<{ headers: Headers; body: string }> = [];
    const refused: string[] = [];
    let up = false;
    server = Bun.serve({
      port,
      hostname: "127.0.0.1",
      async fetch(request) {
        const got = { headers: request.headers, body: await request.text() };
        if (!up) {
          refused.push(got.headers.get("x-svc-delivery") ?? "");
          return new Response("down for maintenance", { status: 503, headers: { "retry-after": "0" } });
        }
        received.push(got);
        return new Response("ok");
      },
    });
    const [letter] = await until("the dead letter", async () => {
      const { body } = await world.api<Json[]>("GET", "/v1/webhooks/dead-letter");
      return body.length ? body : undefined;
    });
    expect(letter).toMatchObject({
      channel: "webhook",
      target: expect.stringMatching(new RegExp(`^http://127\\.0\\.0\\.1:${port}#[0-9a-f]{8}$`)),
      attempts: 4,
      lastError: "HTTP 503",
      event: { event: "session.created", session: { id: created.body.id } },
    });
    // The same delivery each time (up to 3 tries: the first after ag's 1 s, when it is ready by then).
    expect(refused.length).toBeGreaterThanOrEqual(1);
    expect(new Set(refused)).toEqual(new Set([letter!.deliveryId]));
    const health = await world.api<Json[]>("GET", "/v1/channels/health");
    expect(health.body).toEqual([
      expect.objectContaining({ channel: "webhook", healthy: false, pendingCount: 0, lastSuccess: null }),
    ]);

    await world.restart("SIGKILL");
    const after = await world.api<Json[]>("GET", "/v1/webhooks/dead-letter");
    expect(after.body.map((l) => l.deliveryId)).toEqual([letter!.deliveryId]);

    up = true;
    const binary = await compiledBinary();
    const retry = await runAg(binary, ["channels", "dlq", "retry", "webhook"], { env: world.env });
    expect(retry).toMatchObject({ exitCode: 0, stdout: "1 dead letter(s) queued again\n" });

    const [got] = await until("the delivery", async () => (received.length ? received : undefined), 10_000);
    expect(got!.headers.get("x-svc-delivery")).toBe(letter!.deliveryId);
    expect(got!.headers.get("x-svc-event")).toBe("session.created");
    const signature = createHmac("sha256", "s3cret").update(got!.body).digest("hex");
    expect(got!.headers.get("x-svc-signature")).toBe(`sha256=${signature}`);
    expect(JSON.parse(got!.body)).toMatchObject({
      event: "session.created",
      session: { id: created.body.id },
    });

    const list = await runAg(binary, ["channels", "dlq", "list"], { env: world.env });
    expect(list).toMatchObject({ exitCode: 0, stdout: "no dead letters\n" });
    const healthy = await until("a healthy channel", async () => {
      const { body } = await world.api<Json[]>("GET", "/v1/channels/health");
      return body[0]?.healthy ? body : undefined;
    });
    expect(healthy[0]).toMatchObject({ channel: "webhook", healthy: true, lastError: null });
    const usage = await runAg(binary, ["channels", "dlq", "retry", "pigeon"], { env: world.env });
    expect(usage.exitCode).toBe(1);
    expect(usage.stderr).toContain('unknown channel "pigeon"');
  }, 90_000);
});
