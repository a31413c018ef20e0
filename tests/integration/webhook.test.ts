import { afterAll, describe, expect, test } from "bun:test";
import { createHmac } from "node:crypto";
import { createWebhookTarget, webhookName, webhookPayload } from "../../src/channels/webhook.ts";
import type { AgEvent } from "../../src/events/bus.ts";
import type { EventName, EventPayload } from "../../src/events/names.ts";
import { DASHBOARD_URL } from "../helpers/deliveries.ts";
import { SAMPLE_PAYLOADS } from "../helpers/events.ts";

const OPTIONS = { version: "0", dashboardUrl: DASHBOARD_URL };

interface Received {
  headers: Headers;
  body: string;
}

/** A real HTTP receiver on port 0 answering what the test says. */
const received: Received[] = [];
let answer: () => Response | Promise<Response> = () => new Response("ok");
const receiver = Bun.serve({
  port: 0,
  hostname: "127.0.0.1",
  async fetch(request) {
    received.push({ headers: request.headers, body: await request.text() });
    return answer();
  },
});
afterAll(() => receiver.stop(true));
const url = `http://127.0.0.1:${receiver.port}/hooks/ag?token=abc`;

/** An event of session "one" with this detail and meta. */
function at<N extends EventName>(event: N, detail: string, meta: EventPayload<N>): AgEvent<N> {
  const session = { id: "s1", name: "one", workDir: "/w" };
  return { id: 7, event, timestamp: "2026-01-01T00:00:00.000Z", session, detail, meta } as AgEvent<N>;
}
const message = { uuid: "u1", timestamp: null, sidechain: false };
// Fields beyond the catalog's payload: redaction goes by a field's name, wherever it sits.
const extra = { text: "the secret plan", nested: { content: "x", kept: 1 } };
const event = at("message.assistant", "the secret plan", { ...message, ...extra });
const signal = () => new AbortController().signal;

describe("webhooks against a real receiver", () => {
  test("SPEC's payload, our headers, the HMAC of the raw body, custom headers that cannot replace ours", async () => {
    received.length = 0;
    answer = () => new Response("ok");
    const target = createWebhookTarget(
      { url, secret: "s3cret", headers: { "x-team": "blue", "X-Svc-Event": "forged" } },
      { version: "1.2.3", dashboardUrl: DASHBOARD_URL },
    );
    await target.send({ id: "delivery-1", event, attempt: 1 }, signal());
    const [got] = received;
    expect(JSON.parse(got!.body)).toEqual({
      event: "message.assistant",
      timestamp: "2026-01-01T00:00:00.000Z",
      session: { id: "s1", name: "one", workDir: "/w" },
      detail: "the secret plan",
      meta: event.meta,
    });
    expect(got!.headers.get("x-svc-event")).toBe("message.assistant");
    expect(got!.headers.get("x-svc-delivery")).toBe("delivery-1");
    expect(got!.headers.get("x-team")).toBe("blue");
    expect(got!.headers.get("user-agent")).toBe("ag/1.2.3");
    const expected = createHmac("sha256", "s3cret").update(got!.body).digest("hex");
    expect(got!.headers.get("x-svc-signature")).toBe(`sha256=${expected}`);
  });

  test("an event that needs a human carries the session's dashboard page as meta.url, signed with the rest", async () => {
    received.length = 0;
    answer = () => new Response("ok");
    const target = createWebhookTarget({ url, secret: "s3cret" }, OPTIONS);
    const prompt = at("status.permission", "Bash: npm test", SAMPLE_PAYLOADS["status.permission"]);
    await target.send({ id: "d-1", event: prompt, attempt: 1 }, signal());
    const body = JSON.parse(received[0]!.body);
    expect(body.meta).toEqual({
      ...SAMPLE_PAYLOADS["status.permission"],
      url: "https://ag.example.test/dashboard/#/sessions/s1",
    });
    const expected = createHmac("sha256", "s3cret").update(received[0]!.body).digest("hex");
    expect(received[0]!.headers.get("x-svc-signature")).toBe(`sha256=${expected}`);

    // An event that needs nobody has no link, nor has one without a session.
    await target.send(
      { id: "d-2", event: at("status.idle", "", SAMPLE_PAYLOADS["status.idle"]), attempt: 1 },
      signal(),
    );
    expect(JSON.parse(received[1]!.body).meta).toEqual(SAMPLE_PAYLOADS["status.idle"]);
    const sessionless = { ...at("status.stall", "", SAMPLE_PAYLOADS["status.stall"]), session: undefined };
    await target.send({ id: "d-3", event: sessionless, attempt: 1 }, signal());
    expect(JSON.parse(received[2]!.body).meta.url).toBeUndefined();
  });

  test("redaction keeps the link: it is ag's, not what the agent wrote", () => {
    const link = "https://ag.example.test/dashboard/#/sessions/s1";
    const timeout = webhookPayload(
      at("status.permission_timeout", "no answer", {
        pendingPermission: SAMPLE_PAYLOADS["status.permission_timeout"].pendingPermission,
      }),
      true,
      link,
    );
    expect(timeout.meta).toEqual({
      pendingPermission: { id: "perm-1", kind: "tool", tool: "Bash", detail: "[REDACTED]" },
      url: link,
    });
  });

  test("no secret, no signature header", async () => {
    received.length = 0;
    await createWebhookTarget({ url }, OPTIONS).send({ id: "d", event, attempt: 1 }, signal());
    expect(received[0]!.headers.get("x-svc-signature")).toBeNull();
  });

  test("redactContent replaces what the agent or user wrote, keeps the rest", () => {
    const redacted = webhookPayload(event, true);
    expect(redacted).toMatchObject({
      detail: "[REDACTED]",
      meta: { ...message, text: "[REDACTED]", nested: { content: "[REDACTED]", kept: 1 } },
      session: { id: "s1" },
    });
    const tool = webhookPayload(
      at("message.tool_use", "Edit", {
        ...message,
        tool: "Edit",
        toolUseId: "toolu_9",
        input: { new_string: "code" },
      }),
      true,
    );
    expect(tool.meta).toEqual({ ...message, tool: "Edit", toolUseId: "toolu_9", input: "[REDACTED]" });
    // Any event's meta may hold the pending prompt's command.
    const timeout = webhookPayload(
      at("status.permission_timeout", "no answer to tool prompt for 300000 ms", {
        pendingPermission: { id: "perm-1", kind: "tool", tool: "Bash", detail: "curl -H 'Bearer sk-x'" },
      }),
      true,
    );
    expect(JSON.stringify(timeout)).not.toContain("sk-x");
    expect(timeout.meta).toEqual({
      pendingPermission: { id: "perm-1", kind: "tool", tool: "Bash", detail: "[REDACTED]" },
    });
    const state = webhookPayload(at("status.idle", "working → idle", SAMPLE_PAYLOADS["status.idle"]), true);
    expect(state.detail).toBe("working → idle");
  });

  test.each([
    [500, true],
    [503, true],
    [408, true],
    [429, true],
    [400, false],
    [404, false],
    [301, false],
  ])("HTTP %i → retryable %p", async (status, retryable) => {
    answer = () => new Response("no", { status, headers: status === 301 ? { location: "/elsewhere" } : {} });
    const target = createWebhookTarget({ url }, OPTIONS);
    const error = await target.send({ id: "d", event, attempt: 1 }, signal()).catch((e) => e);
    expect(error).toMatchObject({ name: "DeliveryError", retryable, message: `HTTP ${status}` });
  });

  test("429 with Retry-After: the wait comes back to the dispatcher", async () => {
    answer = () => new Response("slow down", { status: 429, headers: { "retry-after": "7" } });
    const error = await createWebhookTarget({ url }, OPTIONS)
      .send({ id: "d", event, attempt: 1 }, signal())
      .catch((e) => e);
    expect(error).toMatchObject({ retryable: true, retryAfterMs: 7000 });
  });

  test("a receiver that is down is a retryable network error", async () => {
    const closed = Bun.serve({ port: 0, fetch: () => new Response() });
    const port = closed.port;
    closed.stop(true);
    const error = await createWebhookTarget({ url: `http://127.0.0.1:${port}/` }, OPTIONS)
      .send({ id: "d", event, attempt: 1 }, signal())
      .catch((e) => e);
    expect(error).toMatchObject({ name: "DeliveryError", retryable: true });
  });

  test("events filter, timeout default 5000, name without query or credentials", () => {
    const target = createWebhookTarget(
      { url: "https://user:pw@example.com/x?k=secret", events: ["session.ended"] },
      OPTIONS,
    );
    expect(target.accepts(event)).toBe(false);
    expect(target.accepts(at("session.ended", "", SAMPLE_PAYLOADS["session.ended"]))).toBe(true);
    expect(target.timeoutMs).toBe(5000);
    expect(target.name).toMatch(/^https:\/\/example\.com#[0-9a-f]{8}$/);
    expect(target.name).not.toContain("secret");
    // Two hooks on one origin are two names.
    expect(webhookName(`${url}&other`)).not.toBe(webhookName(url));
  });
});
