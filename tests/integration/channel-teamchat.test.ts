import { afterAll, describe, expect, test } from "bun:test";
import { createTeamchatTarget, NEUTRAL_COLOUR, truncate } from "../../src/channels/teamchat.ts";
import type { AgEvent } from "../../src/events/bus.ts";
import type { EventName } from "../../src/events/names.ts";
import { DASHBOARD_URL, firstAttempt, live, sampleEvent } from "../helpers/deliveries.ts";

interface Received {
  path: string;
  headers: Headers;
  body: Record<string, unknown>;
}

/** A real incoming-webhook receiver on port 0 answering what the test says. */
const received: Received[] = [];
let answer: (request: Request) => Response | Promise<Response> = () => new Response("ok");
const receiver = Bun.serve({
  port: 0,
  hostname: "127.0.0.1",
  async fetch(request) {
    const path = new URL(request.url).pathname;
    received.push({ path, headers: request.headers, body: await request.json() });
    return answer(request);
  },
});
afterAll(() => receiver.stop(true));
const url = `http://127.0.0.1:${receiver.port}/services/T000/B000/secret-token`;

async function post(e: AgEvent, channel = ""): Promise<Received> {
  received.length = 0;
  answer = () => new Response("ok");
  await createTeamchatTarget({
    url,
    events: null,
    channel,
    timeoutMs: 5000,
    dashboardUrl: DASHBOARD_URL,
  }).send(firstAttempt(e), live());
  expect(received).toHaveLength(1);
  return received[0]!;
}

interface Attachment {
  color: string;
  fallback: string;
  blocks: { type: string; text?: { type: string; text: string }; elements?: { text: string }[] }[];
}
const attachment = (got: Received) => (got.body.attachments as Attachment[])[0]!;

describe("team chat against a real incoming-webhook receiver", () => {
  test("a block message: header with event and session, the detail, a context line; no link for a mere status", async () => {
    const got = await post(sampleEvent("status.working"));
    expect(got.body.text).toBe("status.working · fix-login: no output for 5 minutes");
    expect(got.body.attachments).toEqual([
      {
        color: "#1e88e5",
        fallback: "status.working · fix-login: no output for 5 minutes",
        blocks: [
          { type: "header", text: { type: "plain_text", text: "status.working · fix-login" } },
          { type: "section", text: { type: "plain_text", text: "no output for 5 minutes" } },
          {
            type: "context",
            elements: [{ type: "mrkdwn", text: "session `sess-1` · `/repo/app` · 2026-01-01T00:00:00.000Z" }],
          },
        ],
      },
    ]);
  });

  test("an event that needs a human: its text ends with a link to the session's dashboard page", async () => {
    const got = await post(sampleEvent("status.stall"));
    expect(got.path).toBe("/services/T000/B000/secret-token");
    expect(got.headers.get("content-type")).toBe("application/json");
    expect(got.headers.get("x-svc-event")).toBe("status.stall");
    expect(got.headers.get("x-svc-delivery")).toBe("delivery-1");
    expect(got.body.channel).toBeUndefined();
    expect(got.body.text).toBe(
      "status.stall · fix-login: no output for 5 minutes\n<https://ag.example.test/dashboard/#/sessions/sess-1|Open in the dashboard>",
    );
    expect(got.body.attachments).toEqual([
      {
        color: "#f2c744",
        fallback: "status.stall · fix-login: no output for 5 minutes",
        blocks: [
          { type: "header", text: { type: "plain_text", text: "status.stall · fix-login" } },
          { type: "section", text: { type: "plain_text", text: "no output for 5 minutes" } },
          {
            type: "context",
            elements: [{ type: "mrkdwn", text: "session `sess-1` · `/repo/app` · 2026-01-01T00:00:00.000Z" }],
          },
        ],
      },
    ]);
  });

  test.each([
    ["session.created", "#2eb886"],
    ["session.ended", "#9e9e9e"],
    ["status.working", "#1e88e5"],
    ["status.stall", "#f2c744"],
    ["status.dead", "#d32f2f"],
    ["status.error", "#d32f2f"],
    ["status.idle", NEUTRAL_COLOUR],
    ["message.assistant", NEUTRAL_COLOUR],
  ] as [EventName, string][])("%s is coloured %s", async (name, colour) => {
    expect(attachment(await post(sampleEvent(name))).color).toBe(colour);
  });

  test("the channel override goes into the payload", async () => {
    expect((await post(sampleEvent("session.created"), "#agents")).body.channel).toBe("#agents");
  });

  test("no session, no detail: header is the event, no empty section, context is the time", async () => {
    const got = await post(sampleEvent("status.error", { session: undefined, detail: "" }));
    expect(got.body.text).toBe("status.error");
    expect(attachment(got).blocks.map((b) => b.type)).toEqual(["header", "context"]);
    expect(attachment(got).blocks[1]!.elements![0]!.text).toBe("2026-01-01T00:00:00.000Z");
  });

  test("long texts are cut to the receiver's limits; markup in names cannot mention or link", async () => {
    const name = `<!channel> & ${"n".repeat(300)}`;
    const detail = "x".repeat(10_000);
    const got = await post(
      sampleEvent("status.error", { detail, session: { id: "s", name, workDir: "/w<x>" } }),
    );
    const [header, section, context] = attachment(got).blocks;
    expect(Array.from(header!.text!.text)).toHaveLength(150);
    expect(header!.text!.text.endsWith("…")).toBe(true);
    expect(section!.text!.text).toBe(`${"x".repeat(2999)}…`);
    expect(context!.elements![0]!.text).toContain("`/w&lt;x&gt;`");
    const [preview, link] = (got.body.text as string).split("\n");
    expect(preview).toStartWith("status.error · &lt;!channel&gt; &amp; nnn");
    expect(preview!.length).toBeLessThan(400);
    expect(link).toBe("<https://ag.example.test/dashboard/#/sessions/s|Open in the dashboard>");
  });

  test("truncate never splits a surrogate pair", () => {
    expect(truncate("😀😀😀", 2)).toBe("😀…");
    expect(truncate("short", 10)).toBe("short");
  });

  test("the events filter decides accepts; null takes everything", () => {
    const some = createTeamchatTarget({
      url,
      events: ["status.dead"],
      timeoutMs: 5000,
      dashboardUrl: DASHBOARD_URL,
    });
    expect(some.accepts(sampleEvent("status.dead"))).toBe(true);
    expect(some.accepts(sampleEvent("status.idle"))).toBe(false);
    const all = createTeamchatTarget({ url, events: null, timeoutMs: 5000, dashboardUrl: DASHBOARD_URL });
    expect(all.accepts(sampleEvent("message.thinking"))).toBe(true);
  });

  test("named by origin only (the path is the secret), one delivery at a time, its timeout", () => {
    const target = createTeamchatTarget({ url, events: null, timeoutMs: 1234, dashboardUrl: DASHBOARD_URL });
    expect(target.channel).toBe("teamchat");
    expect(target.name).toBe(`http://127.0.0.1:${receiver.port}`);
    expect(target.concurrency).toBe(1);
    expect(target.timeoutMs).toBe(1234);
  });
});

describe("team chat failures", () => {
  const target = createTeamchatTarget({ url, events: null, timeoutMs: 5000, dashboardUrl: DASHBOARD_URL });
  const fail = (signal = live()) =>
    target.send(firstAttempt(sampleEvent("status.dead")), signal).catch((e) => e);

  test("500 is retryable, with the receiver's reason", async () => {
    answer = () => new Response("internal_error", { status: 500 });
    expect(await fail()).toMatchObject({
      name: "DeliveryError",
      retryable: true,
      message: "HTTP 500: internal_error",
    });
  });

  test("400 goes to the dead letters (not retryable)", async () => {
    answer = () => new Response("invalid_payload", { status: 400 });
    expect(await fail()).toMatchObject({ retryable: false, message: "HTTP 400: invalid_payload" });
  });

  test("429 with Retry-After hands the wait to the dispatcher", async () => {
    answer = () => new Response("", { status: 429, headers: { "retry-after": "3" } });
    expect(await fail()).toMatchObject({ retryable: true, retryAfterMs: 3000, message: "HTTP 429" });
  });

  test("a receiver that never answers is given up when the signal aborts", async () => {
    let hung = 0;
    answer = (request) =>
      new Promise((resolve) => {
        hung++;
        request.signal.addEventListener("abort", () => resolve(new Response("late")));
      });
    const controller = new AbortController();
    const pending = fail(controller.signal);
    while (hung === 0) await Bun.sleep(5);
    controller.abort();
    expect(await pending).toMatchObject({ name: "DeliveryError", retryable: true });
  });

  test("a receiver that is down is a retryable network error", async () => {
    const closed = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response() });
    const port = closed.port;
    closed.stop(true);
    const down = createTeamchatTarget({
      url: `http://127.0.0.1:${port}/x`,
      events: null,
      timeoutMs: 5000,
      dashboardUrl: DASHBOARD_URL,
    });
    const error = await down.send(firstAttempt(sampleEvent("status.dead")), live()).catch((e) => e);
    expect(error).toMatchObject({ name: "DeliveryError", retryable: true });
  });
});
