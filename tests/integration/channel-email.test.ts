import { afterAll, describe, expect, test } from "bun:test";
import { createServer, type Server } from "node:net";
import { SMTPServer, type SMTPServerOptions } from "smtp-server";
import type { ChannelTarget } from "../../src/channels/channel.ts";
import {
  createEmailTarget,
  type EmailOptions,
  emailHtml,
  emailSubject,
  smtpTransportOptions,
} from "../../src/channels/email.ts";
import { isAgError } from "../../src/shared/errors.ts";
import { DASHBOARD_URL, firstAttempt, live, sampleEvent } from "../helpers/deliveries.ts";

interface Mail {
  envelopeFrom: string;
  envelopeTo: string[];
  raw: string;
}

/** What a real SMTP server saw: authentications, connections, and the mails it accepted. */
interface Sink {
  port: number;
  mails: Mail[];
  logins: string[];
  connections: number;
  closed: number;
}

const servers: { close(callback: () => void): void }[] = [];
const targets: ChannelTarget[] = [];
// Targets first: a server waits for its open connections (the pools') before it is closed.
afterAll(async () => {
  await Promise.all(targets.map((t) => t.close?.()));
  await Promise.all(servers.map((server) => new Promise<void>((done) => server.close(() => done()))));
});

/**
 * A real SMTP server on port 0, plain (no TLS, STARTTLS not offered, so nodemailer does not try to
 * upgrade) with PLAIN/LOGIN authentication for user "ag" / password "hunter2".
 */
async function smtpSink(overrides: Partial<SMTPServerOptions> = {}): Promise<Sink> {
  const sink: Sink = { port: 0, mails: [], logins: [], connections: 0, closed: 0 };
  const server = new SMTPServer({
    secure: false,
    disabledCommands: ["STARTTLS"],
    authMethods: ["PLAIN", "LOGIN"],
    allowInsecureAuth: true,
    logger: false,
    // The stalling servers of the tests hold connections nobody will finish.
    closeTimeout: 100,
    onConnect(_session, callback) {
      sink.connections++;
      callback();
    },
    onClose() {
      sink.closed++;
    },
    onAuth(auth, _session, callback) {
      sink.logins.push(`${auth.method} ${auth.username}`);
      if (auth.username === "ag" && auth.password === "hunter2") return callback(null, { user: "ag" });
      callback(new Error("Invalid username or password"));
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on("data", (chunk: Buffer) => chunks.push(chunk));
      stream.on("end", () => {
        sink.mails.push({
          envelopeFrom: session.envelope.mailFrom ? session.envelope.mailFrom.address : "",
          envelopeTo: session.envelope.rcptTo.map((r) => r.address),
          raw: Buffer.concat(chunks).toString("utf8"),
        });
        callback();
      });
    },
    ...overrides,
  });
  servers.push(server);
  await new Promise<void>((done) => server.listen(0, "127.0.0.1", () => done()));
  sink.port = (server.server.address() as { port: number }).port;
  return sink;
}

/** An SMTP error reply with its code, as smtp-server sends it. */
function reply(code: number, text: string): Error {
  return Object.assign(new Error(text), { responseCode: code });
}

// The wire format, read back: headers unfolded, RFC 2047 words decoded. Enough for what
// nodemailer writes for our mails (UTF-8, Q or B words; an ASCII body sent as is).
function headers(raw: string): Map<string, string> {
  const head = raw.slice(0, raw.indexOf("\r\n\r\n")).replace(/\r\n[ \t]+/g, " ");
  const decoded = head.replace(
    /=\?utf-8\?([qb])\?([^?]*)\?=(?:\s+(?==\?))?/gi,
    (_, kind: string, text: string) =>
      kind.toLowerCase() === "b"
        ? Buffer.from(text, "base64").toString("utf8")
        : Buffer.from(
            text
              .replace(/_/g, " ")
              .replace(/=([0-9a-f]{2})/gi, (_m, hex: string) =>
                String.fromCharCode(Number.parseInt(hex, 16)),
              ),
            "latin1",
          ).toString("utf8"),
  );
  return new Map(
    decoded.split("\r\n").map((line) => {
      const colon = line.indexOf(":");
      return [line.slice(0, colon).toLowerCase(), line.slice(colon + 1).trim()] as [string, string];
    }),
  );
}
const body = (raw: string) => raw.slice(raw.indexOf("\r\n\r\n") + 4);

/** A part's content as the sender meant it (7bit, quoted-printable or base64; UTF-8). */
function decodePart(part: string): { type: string; text: string } {
  const head = headers(part);
  const content = body(part);
  const encoding = head.get("content-transfer-encoding")?.toLowerCase() ?? "7bit";
  const bytes =
    encoding === "base64"
      ? Buffer.from(content.replace(/\s+/g, ""), "base64")
      : encoding === "quoted-printable"
        ? Buffer.from(
            content
              .replace(/=\r\n/g, "")
              .replace(/=([0-9a-f]{2})/gi, (_m, hex: string) =>
                String.fromCharCode(Number.parseInt(hex, 16)),
              ),
            "latin1",
          )
        : Buffer.from(content, "utf8");
  return {
    type: head.get("content-type")!.split(";")[0]!,
    text: bytes.toString("utf8").replace(/\r\n/g, "\n"),
  };
}

/** The text and HTML alternatives of a multipart/alternative mail. */
function alternatives(raw: string): { text: string; html: string } {
  const type = headers(raw).get("content-type")!;
  expect(type).toStartWith("multipart/alternative");
  const boundary = /boundary="?([^";]+)"?/.exec(type)![1]!;
  const parts = body(raw)
    .split(`--${boundary}`)
    .slice(1, -1)
    .map((p) => decodePart(p.replace(/^\r\n/, "").replace(/\r\n$/, "")));
  const of = (t: string) => parts.find((p) => p.type === t)?.text ?? "";
  return { text: of("text/plain"), html: of("text/html") };
}

function target(port: number, overrides: Partial<EmailOptions> = {}): ChannelTarget {
  const made = createEmailTarget({
    host: "127.0.0.1",
    port,
    secure: false,
    user: "ag",
    pass: "hunter2",
    from: "ag@example.test",
    to: "ops@example.test, lead@example.test",
    events: ["status.stall", "status.dead", "status.error", "status.permission_timeout"],
    timeoutMs: 10_000,
    dashboardUrl: DASHBOARD_URL,
    ...overrides,
  });
  targets.push(made);
  return made;
}

describe("email through a real SMTP server", () => {
  test("the mail arrives authenticated with SPEC's subject, our from and to, and the event in the body", async () => {
    const sink = await smtpSink();
    await target(sink.port).send(firstAttempt(sampleEvent("status.stall")), live());
    expect(sink.logins).toEqual(["PLAIN ag"]);
    expect(sink.mails).toHaveLength(1);
    const [mail] = sink.mails;
    expect(mail!.envelopeFrom).toBe("ag@example.test");
    expect(mail!.envelopeTo).toEqual(["ops@example.test", "lead@example.test"]);
    const head = headers(mail!.raw);
    expect(head.get("subject")).toBe("[ACTION] Session Stalled — fix-login");
    expect(head.get("from")).toBe("ag@example.test");
    expect(head.get("to")).toBe("ops@example.test, lead@example.test");
    expect(head.get("x-svc-event")).toBe("status.stall");
    expect(head.get("x-svc-delivery")).toBe("delivery-1");
    const { text, html } = alternatives(mail!.raw);
    expect(text).toBe(
      [
        "[ACTION] Session Stalled",
        "",
        "Event:    status.stall",
        "Session:  fix-login (sess-1)",
        "Work dir: /repo/app",
        "Time:     2026-01-01T00:00:00.000Z",
        "",
        "no output for 5 minutes",
        "",
        "Open in the dashboard: https://ag.example.test/dashboard/#/sessions/sess-1",
        "",
      ].join("\n"),
    );
    // The HTML alternative says the same, with the link as a link.
    expect(html).toContain("<h2>[ACTION] Session Stalled</h2>");
    expect(html).toContain('<tr><th align="left">Session</th><td>fix-login (sess-1)</td></tr>');
    expect(html).toContain('<p style="white-space: pre-wrap">no output for 5 minutes</p>');
    expect(html).toContain(
      '<p><a href="https://ag.example.test/dashboard/#/sessions/sess-1">Open in the dashboard</a></p>',
    );
  });

  test("an event that needs nobody mails no link", async () => {
    const sink = await smtpSink();
    await target(sink.port, { events: ["session.created"] }).send(
      firstAttempt(sampleEvent("session.created", { detail: "session fix-login created" })),
      live(),
    );
    const { text, html } = alternatives(sink.mails[0]!.raw);
    expect(text).toEndWith("\n\nsession fix-login created\n");
    expect(text).not.toContain("dashboard");
    expect(html).not.toContain("<a ");
  });

  test("the pool keeps one connection for later mails; close() ends it", async () => {
    const sink = await smtpSink();
    const email = target(sink.port);
    await email.send(firstAttempt(sampleEvent("status.dead"), "a"), live());
    await email.send(firstAttempt(sampleEvent("status.error"), "b"), live());
    await email.send(firstAttempt(sampleEvent("status.permission_timeout"), "c"), live());
    expect(sink.mails.map((m) => headers(m.raw).get("subject"))).toEqual([
      "[CRITICAL] Session Dead — fix-login",
      "[ERROR] Session Error — fix-login",
      "[WARNING] Permission Timeout — fix-login",
    ]);
    expect(sink.connections).toBe(1);
    expect(sink.closed).toBe(0);
    await email.close?.();
    while (sink.closed === 0) await Bun.sleep(5);
    expect(sink.closed).toBe(1);
  });

  test("550 for a recipient is permanent", async () => {
    const sink = await smtpSink({
      onRcptTo: (_address, _session, callback) => callback(reply(550, "No such user here")),
    });
    const error = await target(sink.port)
      .send(firstAttempt(sampleEvent("status.dead")), live())
      .catch((e) => e);
    expect(error).toMatchObject({ name: "DeliveryError", retryable: false });
    expect(error.message).toContain("550");
    expect(sink.mails).toHaveLength(0);
  });

  test("451 after the data is transient", async () => {
    const sink = await smtpSink({
      onData(stream, _session, callback) {
        stream.resume();
        stream.on("end", () => callback(reply(451, "Try again later")));
      },
    });
    const error = await target(sink.port)
      .send(firstAttempt(sampleEvent("status.dead")), live())
      .catch((e) => e);
    expect(error).toMatchObject({ name: "DeliveryError", retryable: true });
    expect(error.message).toContain("451");
  });

  test("a wrong password is permanent: retrying cannot fix the configuration", async () => {
    const sink = await smtpSink();
    const error = await target(sink.port, { pass: "wrong" })
      .send(firstAttempt(sampleEvent("status.dead")), live())
      .catch((e) => e);
    expect(error).toMatchObject({ name: "DeliveryError", retryable: false });
    expect(error.message).toContain("535");
    expect(sink.logins).toEqual(["PLAIN ag"]);
    expect(sink.mails).toHaveLength(0);
  });

  test("a server that is down is transient", async () => {
    const sink = await smtpSink();
    const port = sink.port;
    await new Promise<void>((done) => servers.pop()!.close(() => done()));
    const error = await target(port)
      .send(firstAttempt(sampleEvent("status.dead")), live())
      .catch((e) => e);
    expect(error).toMatchObject({ name: "DeliveryError", retryable: true });
  });

  test("a server that never greets times out after the channel's timeout, transient", async () => {
    const silent: Server = createServer(() => {});
    await new Promise<void>((done) => silent.listen(0, "127.0.0.1", done));
    servers.push(silent);
    const port = (silent.address() as { port: number }).port;
    const error = await target(port, { timeoutMs: 200 })
      .send(firstAttempt(sampleEvent("status.dead")), live())
      .catch((e) => e);
    expect(error).toMatchObject({ name: "DeliveryError", retryable: true });
    expect(error.message).toContain("ETIMEDOUT");
  });

  test("a server that stalls on the data is given up when the signal aborts", async () => {
    let stalled = 0;
    const sink = await smtpSink({
      onData(stream) {
        stalled++;
        stream.resume();
      },
    });
    const controller = new AbortController();
    const pending = target(sink.port)
      .send(firstAttempt(sampleEvent("status.dead")), controller.signal)
      .catch((e) => e);
    while (stalled === 0) await Bun.sleep(5);
    controller.abort();
    expect(await pending).toMatchObject({ name: "DeliveryError", retryable: true });
  });
});

describe("email settings and formatting", () => {
  const base: EmailOptions = {
    host: "smtp.example.test",
    port: 587,
    secure: false,
    user: "",
    pass: "",
    from: "ag@example.test",
    to: "ops@example.test",
    events: ["status.dead"],
    timeoutMs: 10_000,
    dashboardUrl: DASHBOARD_URL,
  };

  test("a pooled transport; TLS from the start on port 465 or when asked; auth only with a user", () => {
    expect(smtpTransportOptions(base)).toMatchObject({
      pool: true,
      secure: false,
      auth: undefined,
      connectionTimeout: 10_000,
      greetingTimeout: 10_000,
      socketTimeout: 10_000,
    });
    expect(smtpTransportOptions({ ...base, port: 465 }).secure).toBe(true);
    expect(smtpTransportOptions({ ...base, secure: true }).secure).toBe(true);
    expect(smtpTransportOptions({ ...base, user: "u", pass: "p" }).auth).toEqual({ user: "u", pass: "p" });
  });

  test("the events filter, one delivery at a time, named by host and port", () => {
    const email = target(2525, { host: "127.0.0.1", events: ["status.dead"] });
    expect(email.accepts(sampleEvent("status.dead"))).toBe(true);
    expect(email.accepts(sampleEvent("status.stall"))).toBe(false);
    expect(email.channel).toBe("email");
    expect(email.concurrency).toBe(1);
    expect(email.name).toBe("127.0.0.1:2525");
  });

  test("other events are [INFO]; no session, no suffix; a name cannot break the header", () => {
    expect(emailSubject(sampleEvent("session.created"))).toBe("[INFO] session.created — fix-login");
    expect(emailSubject(sampleEvent("status.dead", { session: undefined }))).toBe("[CRITICAL] Session Dead");
    const name = "evil\r\nBcc: victim@example.test";
    expect(emailSubject(sampleEvent("status.error", { session: { id: "s", name, workDir: "/w" } }))).toBe(
      "[ERROR] Session Error — evil Bcc: victim@example.test",
    );
  });

  test("the HTML alternative escapes what the agent or a session name says", () => {
    const event = sampleEvent("status.error", {
      detail: `<img src=x onerror="alert(1)"> & more`,
      session: { id: "s", name: "<b>api</b>", workDir: "/w" },
    });
    const html = emailHtml(event, "https://ag.example.test/dashboard/#/sessions/s");
    expect(html).toContain("&lt;img src=x onerror=&quot;alert(1)&quot;&gt; &amp; more");
    expect(html).toContain("&lt;b&gt;api&lt;/b&gt; (s)");
    expect(html).not.toContain("<img");
    expect(html).not.toContain("<b>");
  });

  test("no recipient, or no sender at all, is a configuration error", () => {
    const refused = (options: EmailOptions) => {
      try {
        createEmailTarget(options);
      } catch (error) {
        return isAgError(error) ? error.code : error;
      }
    };
    expect(refused({ ...base, to: " " })).toBe("CONFIG_INVALID");
    expect(refused({ ...base, from: "" })).toBe("CONFIG_INVALID");
  });

  test("the sender defaults to the SMTP user", async () => {
    const sink = await smtpSink({ onAuth: (_auth, _session, callback) => callback(null, { user: "any" }) });
    await target(sink.port, { from: "", user: "mailer@example.test" }).send(
      firstAttempt(sampleEvent("status.dead")),
      live(),
    );
    expect(sink.mails[0]!.envelopeFrom).toBe("mailer@example.test");
    expect(headers(sink.mails[0]!.raw).get("from")).toBe("mailer@example.test");
  });
});
