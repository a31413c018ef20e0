import { afterAll, describe, expect, test } from "bun:test";
import { SMTPServer } from "smtp-server";
import { sampleInput } from "../helpers/events.ts";
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
      for (let i = 0; i < 10; i++) runtime.bus.publish(sampleInput("session.created", { detail: `n${i}` }));
      const deadline = Date.now() + 2_000;
      while (fast.length < 10 && Date.now() < deadline) await Bun.sleep(10);
      expect(fast).toHaveLength(10);
      expect(Math.max(...fast) - started).toBeLessThan(2_000);
      // pendingCount sums both targets: the fast one's last delivery may still be in flight when
      // its receiver has seen it (the response not read yet). Once it has drained, the hanging
      // target's ten are what stays pending.
      const read = async () => (await fetch(`${runtime.url}/v1/channels/health`)).json();
      let health = await read();
      for (const until = Date.now() + 2_000; health[0]?.pendingCount !== 10 && Date.now() < until; ) {
        await Bun.sleep(20);
        health = await read();
      }
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
      // As the CLI sends them (`ag channels dlq`): with the token ag generated.
      const headers = { authorization: `Bearer ${runtime.token()}` };
      const retry = await fetch(`${runtime.url}/v1/channels/email/dead-letters/retry`, {
        method: "POST",
        headers,
      });
      expect(retry.status).toBe(409);
      const bad = await fetch(`${runtime.url}/v1/channels/pigeon/dead-letters`, {
        method: "DELETE",
        headers,
      });
      expect(bad.status).toBe(400);
    } finally {
      await runtime.drain(100);
      runtime.close();
    }
  });
});

/** A real SMTP server on port 0 (user "ag", password "pw"); the raw mails it accepted. */
async function smtpSink(): Promise<{ port: number; mails: string[]; close(): Promise<void> }> {
  const mails: string[] = [];
  const smtp = new SMTPServer({
    secure: false,
    disabledCommands: ["STARTTLS"],
    authMethods: ["PLAIN", "LOGIN"],
    allowInsecureAuth: true,
    logger: false,
    onAuth(auth, _session, callback) {
      if (auth.username === "ag" && auth.password === "pw") return callback(null, { user: "ag" });
      callback(new Error("Invalid username or password"));
    },
    onData(stream, _session, callback) {
      const chunks: Buffer[] = [];
      stream.on("data", (c: Buffer) => chunks.push(c));
      stream.on("end", () => {
        mails.push(Buffer.concat(chunks).toString("utf8"));
        callback();
      });
    },
  });
  await new Promise<void>((done) => smtp.listen(0, "127.0.0.1", () => done()));
  return {
    port: (smtp.server.address() as { port: number }).port,
    mails,
    close: () => new Promise<void>((done) => smtp.close(() => done())),
  };
}

/** A mail's quoted-printable text, decoded (soft line breaks joined, =XX bytes as UTF-8). */
const unquote = (raw: string) =>
  Buffer.from(
    raw
      .replace(/=\r\n/g, "")
      .replace(/=([0-9A-F]{2})/g, (_m, hex: string) => String.fromCharCode(Number.parseInt(hex, 16))),
    "latin1",
  ).toString("utf8");

const EMAIL_ENV = (port: number) => ({
  SVC_EMAIL_HOST: "127.0.0.1",
  SVC_EMAIL_PORT: String(port),
  SVC_EMAIL_USER: "ag",
  SVC_EMAIL_PASS: "pw",
  SVC_EMAIL_TO: "ops@example.com",
  SVC_EMAIL_FROM: "ag@example.com",
});

describe("team chat and email through the runtime", () => {
  test("a stall reaches team chat (yellow) and the SMTP server with SPEC's subject; other events do not mail", async () => {
    const { port: smtpPort, mails, close: closeSmtp } = await smtpSink();
    const posts: Array<{ attachments: Array<{ color: string }> }> = [];
    const teamchat = Bun.serve({
      port: 0,
      hostname: "127.0.0.1",
      async fetch(request) {
        posts.push(await request.json());
        return new Response("ok");
      },
    });
    const runtime = await startTestRuntime({
      ...EMAIL_ENV(smtpPort),
      SVC_TEAMCHAT_WEBHOOK_URL: `http://127.0.0.1:${teamchat.port}/hook`,
    });
    try {
      const session = { id: "0b5e55ed-0000-4000-8000-000000000001", name: "api", workDir: "/srv/api" };
      runtime.bus.publish(sampleInput("session.created", { session, detail: "session api created" }));
      runtime.bus.publish(sampleInput("status.stall", { session, detail: "working → stalled" }));
      const deadline = Date.now() + 10_000;
      while ((mails.length < 1 || posts.length < 2) && Date.now() < deadline) await Bun.sleep(20);
      expect(mails).toHaveLength(1);
      // The subject is RFC 2047-encoded (it has an em dash): "[ACTION] Session Stalled — api".
      expect(mails[0]).toMatch(/^Subject: =\?UTF-8\?Q\?=5BACTION=5D_Session_Stalled_=E2=80=94_a\?=/m);
      expect(mails[0]).toContain("To: ops@example.com");
      expect(posts.map((p) => p.attachments[0]!.color)).toEqual(["#2eb886", "#f2c744"]);
      const health = await (await fetch(`${runtime.url}/v1/channels/health`)).json();
      expect(health.map((h: { channel: string; healthy: boolean }) => [h.channel, h.healthy])).toEqual([
        ["teamchat", true],
        ["email", true],
      ]);
    } finally {
      await runtime.drain(100);
      runtime.close();
      teamchat.stop(true);
      await closeSmtp();
    }
  });

  test("what needs a human carries the session's dashboard link on every channel; a mere status does not", async () => {
    const smtp = await smtpSink();
    const hooks: Array<{ event: string; meta: Record<string, unknown> }> = [];
    const chats: Array<{ text: string }> = [];
    const receiver = Bun.serve({
      port: 0,
      hostname: "127.0.0.1",
      async fetch(request) {
        const body = await request.json();
        if (new URL(request.url).pathname === "/hook") hooks.push(body);
        else chats.push(body);
        return new Response("ok");
      },
    });
    const runtime = await startTestRuntime({
      ...EMAIL_ENV(smtp.port),
      SVC_EMAIL_EVENTS: '["status.permission"]',
      SVC_TEAMCHAT_WEBHOOK_URL: `http://127.0.0.1:${receiver.port}/teamchat`,
      SVC_WEBHOOKS: JSON.stringify([{ url: `http://127.0.0.1:${receiver.port}/hook` }]),
      SVC_DASHBOARD_URL: "http://dash.test:8080/ui",
    });
    try {
      const session = { id: "0b5e55ed-0000-4000-8000-000000000002", name: "web", workDir: "/srv/web" };
      const link = "http://dash.test:8080/ui/#/sessions/0b5e55ed-0000-4000-8000-000000000002";
      runtime.bus.publish(sampleInput("status.working", { session, detail: "idle → working" }));
      runtime.bus.publish(sampleInput("status.permission", { session, detail: "Bash: npm test" }));
      const deadline = Date.now() + 10_000;
      while ((smtp.mails.length < 1 || hooks.length < 2 || chats.length < 2) && Date.now() < deadline)
        await Bun.sleep(20);

      expect(hooks.map((h) => [h.event, h.meta.url])).toEqual([
        ["status.working", undefined],
        ["status.permission", link],
      ]);
      expect(chats.map((c) => c.text)).toEqual([
        "status.working · web: idle → working",
        `status.permission · web: Bash: npm test\n<${link}|Open in the dashboard>`,
      ]);
      expect(smtp.mails).toHaveLength(1);
      const mail = unquote(smtp.mails[0]!);
      expect(mail).toContain(`Open in the dashboard: ${link}\r\n`);
      expect(mail).toContain(`<a href="${link}">Open in the dashboard</a>`);
    } finally {
      await runtime.drain(100);
      runtime.close();
      receiver.stop(true);
      await smtp.close();
    }
  });
});
