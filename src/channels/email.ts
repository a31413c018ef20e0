import type { NodemailerError, SMTPPoolOptions, Transporter } from "nodemailer";
import type { AgEvent } from "../events/bus.ts";
import type { EventName } from "../events/names.ts";
import { AgError } from "../shared/errors.ts";
import { type ChannelTarget, DeliveryError } from "./channel.ts";
import { humanLinks } from "./link.ts";

/** SPEC's subject prefixes; any other event is `[INFO] <event>`. */
export const EMAIL_SUBJECTS: Partial<Record<EventName, string>> = {
  "status.stall": "[ACTION] Session Stalled",
  "status.dead": "[CRITICAL] Session Dead",
  "status.error": "[ERROR] Session Error",
  "status.permission_timeout": "[WARNING] Permission Timeout",
  "consensus.completed": "[REVIEW] Consensus Verdict",
};

/**
 * Failures without an SMTP reply that the same message would meet again: bad credentials or
 * settings, a refused envelope, a server without the TLS we need. Anything else without a reply
 * (refused or dropped connection, timeout, DNS, abort) may pass on the next try.
 */
const PERMANENT_CODES = new Set([
  "EAUTH",
  "ENOAUTH",
  "EOAUTH2",
  "ECONFIG",
  "EENVELOPE",
  "EMAXRECIPIENTS",
  "EREQUIRETLS",
  "ETLS",
]);

export interface EmailOptions {
  host: string;
  port: number;
  /** TLS from the first byte; forced on for port 465, where nothing else is spoken. */
  secure: boolean;
  /** Empty: no authentication. */
  user: string;
  pass: string;
  /** Empty: the SMTP user. */
  from: string;
  /** One address or several, comma-separated. */
  to: string;
  events: readonly EventName[];
  timeoutMs: number;
  /** Where the links of events that need a human point (config `dashboardUrl`). */
  dashboardUrl: string;
}

/** Line breaks and other control characters out: a session name must not fold or end a header. */
function oneLine(text: string): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is the point
  return text.replace(/[\u0000-\u001f\u007f]+/g, " ").trim();
}

export function emailSubject(event: AgEvent): string {
  const prefix = EMAIL_SUBJECTS[event.event] ?? `[INFO] ${event.event}`;
  return event.session ? `${prefix} — ${oneLine(event.session.name)}` : prefix;
}

function fieldsOf(event: AgEvent): [string, string][] {
  const fields: [string, string][] = [["Event", event.event]];
  if (event.session) {
    fields.push(["Session", `${event.session.name} (${event.session.id})`]);
    fields.push(["Work dir", event.session.workDir]);
  }
  fields.push(["Time", event.timestamp]);
  return fields;
}

const LINK_LABEL = "Open in the dashboard";

/** The plain-text body; an event that needs a human ends with its dashboard link (CONTRACT §10). */
export function emailText(event: AgEvent, link: string | null = null): string {
  const table = fieldsOf(event)
    .map(([label, value]) => `${`${label}:`.padEnd(10)}${value}`)
    .join("\n");
  const detail = event.detail.trim() === "" ? "" : `\n\n${event.detail}`;
  const open = link === null ? "" : `\n\n${LINK_LABEL}: ${link}`;
  return `${EMAIL_SUBJECTS[event.event] ?? event.event}\n\n${table}${detail}${open}\n`;
}

function escapeHtml(text: string): string {
  return text
    .replaceAll("&", "&amp;")
    .replaceAll("<", "&lt;")
    .replaceAll(">", "&gt;")
    .replaceAll('"', "&quot;")
    .replaceAll("'", "&#39;");
}

/** The same as HTML (the alternative mail clients show by default), every value escaped. */
export function emailHtml(event: AgEvent, link: string | null = null): string {
  const rows = fieldsOf(event)
    .map(([label, value]) => `<tr><th align="left">${label}</th><td>${escapeHtml(value)}</td></tr>`)
    .join("\n");
  const detail =
    event.detail.trim() === "" ? "" : `<p style="white-space: pre-wrap">${escapeHtml(event.detail)}</p>\n`;
  const open = link === null ? "" : `<p><a href="${escapeHtml(link)}">${LINK_LABEL}</a></p>\n`;
  const title = escapeHtml(EMAIL_SUBJECTS[event.event] ?? event.event);
  return `<!doctype html>
<html>
<body style="font-family: sans-serif">
<h2>${title}</h2>
<table cellpadding="4">
${rows}
</table>
${detail}${open}</body>
</html>
`;
}

/**
 * An SMTP failure as a DeliveryError. RFC 5321: a 4yz reply is transient, a 5yz reply permanent,
 * except 503 (bad sequence of commands), which says the session was in the wrong state, not that
 * the message was refused, so a new connection can pass.
 */
export function smtpFailure(error: NodemailerError): DeliveryError {
  const code = error.responseCode;
  const message = error.response ? `SMTP ${error.response}` : `${error.code ?? "SMTP"}: ${error.message}`;
  if (code !== undefined) return new DeliveryError(message, !(code >= 500 && code < 600 && code !== 503));
  return new DeliveryError(message, !PERMANENT_CODES.has(error.code ?? ""));
}

/**
 * One pooled connection: the channel sends one mail at a time, and each new SMTP connection
 * costs 100–150 ms of handshakes that a reused one does not. Each wait (connect, greeting, a
 * silent socket) is bounded by the channel's timeout.
 */
export function smtpTransportOptions(options: EmailOptions): SMTPPoolOptions & { pool: true } {
  return {
    pool: true,
    maxConnections: 1,
    host: options.host,
    port: options.port,
    secure: options.secure || options.port === 465,
    auth: options.user ? { user: options.user, pass: options.pass } : undefined,
    connectionTimeout: options.timeoutMs,
    greetingTimeout: options.timeoutMs,
    socketTimeout: options.timeoutMs,
  };
}

export function createEmailTarget(options: EmailOptions): ChannelTarget {
  if (options.to.trim() === "") {
    throw new AgError("CONFIG_INVALID", "SVC_EMAIL_TO is required when SVC_EMAIL_HOST is set");
  }
  const from = options.from || options.user;
  if (from === "") {
    throw new AgError("CONFIG_INVALID", "SVC_EMAIL_FROM (or SVC_EMAIL_USER) is required for email");
  }
  // nodemailer loads with the first mail, not with ag: most servers never send one.
  let transport: Promise<Transporter> | null = null;
  const open = () =>
    (transport ??= import("nodemailer").then(({ default: nodemailer }) => {
      const made = nodemailer.createTransport(smtpTransportOptions(options));
      // A transport error with no listener would throw from the emitter; the failing send has
      // already been answered through its own callback.
      made.on("error", () => {});
      return made;
    }));
  const wanted = new Set(options.events);
  const linkOf = humanLinks(options.dashboardUrl);
  return {
    channel: "email",
    name: `${options.host}:${options.port}`,
    timeoutMs: options.timeoutMs,
    concurrency: 1,
    accepts: (event) => wanted.has(event.event),
    async send(delivery, signal) {
      const link = linkOf(delivery.event);
      try {
        await (await open()).sendMail({
          from,
          to: options.to,
          subject: emailSubject(delivery.event),
          text: emailText(delivery.event, link),
          html: emailHtml(delivery.event, link),
          headers: { "X-Svc-Event": delivery.event.event, "X-Svc-Delivery": delivery.id },
          signal,
        });
      } catch (error) {
        throw smtpFailure(error as NodemailerError);
      }
    },
    // At shutdown nothing waits for a stalled server: a delivery still in flight is given up.
    close: async () => (await transport)?.close({ force: true }),
  };
}
