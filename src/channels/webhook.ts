import { createHash, createHmac } from "node:crypto";
import type { WebhookTarget as WebhookConfig } from "../config/schema.ts";
import type { AgEvent } from "../events/bus.ts";
import { injectContext } from "../telemetry/index.ts";
import { type ChannelTarget, DeliveryError, httpFailure } from "./channel.ts";
import { humanLinks } from "./link.ts";

/** SPEC: a webhook request times out after 5000 ms unless the hook says otherwise. */
export const WEBHOOK_TIMEOUT_MS = 5_000;
/** Deliveries in flight per webhook: a slow receiver still gets several at once. */
const CONCURRENCY = 4;
const REDACTED = "[REDACTED]";
/** Events whose detail is what the agent or the user wrote (a message, a command, an error text). */
const CONTENT_EVENTS =
  /^(message\.|permission\.requested$|status\.(permission|question|plan|error|rate_limited|permission_timeout)$)/;
/** Meta fields that carry such content. */
const CONTENT_KEYS = new Set([
  "detail",
  "text",
  "input",
  "output",
  "content",
  "command",
  "prompt",
  "question",
]);
/** Our headers: a configured header of the same name does not replace them. */
const OWN_HEADERS = new Set([
  "content-type",
  "x-svc-event",
  "x-svc-delivery",
  "x-svc-signature",
  "user-agent",
]);

/**
 * SPEC's payload: `{event, timestamp, session, detail, meta}` (the bus event without its id). An
 * event that needs a human gets the session's dashboard page as `meta.url` (CONTRACT §10).
 */
export function webhookPayload(
  event: AgEvent,
  redact: boolean,
  link: string | null = null,
): Record<string, unknown> {
  const { id: _, ...payload } = event;
  // Any event may carry a pending prompt's command in its meta; only some have it as detail.
  const meta = redact ? (redactMeta(event.meta) as Record<string, unknown>) : event.meta;
  return {
    ...payload,
    detail: redact && CONTENT_EVENTS.test(event.event) ? REDACTED : event.detail,
    meta: link === null ? meta : { ...meta, url: link },
  };
}

function redactMeta(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(redactMeta);
  if (value === null || typeof value !== "object") return value;
  return Object.fromEntries(
    Object.entries(value).map(([k, v]) => [k, CONTENT_KEYS.has(k) ? REDACTED : redactMeta(v)]),
  );
}

export function signature(secret: string, body: string): string {
  return `sha256=${createHmac("sha256", secret).update(body).digest("hex")}`;
}

/**
 * Names a webhook in health, dead letters and diagnostics: its origin and a short hash of the
 * whole URL. The path or query of many webhook URLs is their secret (`/api/webhooks/<id>/<token>`),
 * and two hooks on one origin must not share a name (they share the outbox by it).
 */
export function webhookName(url: string): string {
  const digest = createHash("sha256").update(url).digest("hex").slice(0, 8);
  return `${new URL(url).origin}#${digest}`;
}

export function createWebhookTarget(
  config: WebhookConfig,
  options: {
    version: string;
    /** Where the links of events that need a human point (config `dashboardUrl`). */
    dashboardUrl: string;
    fetch?: typeof fetch;
    name?: string;
  },
): ChannelTarget {
  const doFetch = options.fetch ?? fetch;
  const linkOf = humanLinks(options.dashboardUrl);
  const wanted = config.events ? new Set(config.events) : null;
  const extra = Object.fromEntries(
    Object.entries(config.headers ?? {}).filter(([name]) => !OWN_HEADERS.has(name.toLowerCase())),
  );
  return {
    channel: "webhook",
    name: options.name ?? webhookName(config.url),
    timeoutMs: config.timeoutMs ?? WEBHOOK_TIMEOUT_MS,
    concurrency: CONCURRENCY,
    accepts: (event) => wanted === null || wanted.has(event.event),
    async send(delivery, signal) {
      const { event } = delivery;
      const body = JSON.stringify(webhookPayload(event, config.redactContent === true, linkOf(event)));
      const headers: Record<string, string> = {
        ...extra,
        "content-type": "application/json",
        "user-agent": `ag/${options.version}`,
        "x-svc-event": delivery.event.event,
        "x-svc-delivery": delivery.id,
      };
      if (config.secret) headers["x-svc-signature"] = signature(config.secret, body);
      // The attempt's span (tracing on): the receiver can continue its trace.
      injectContext(headers);
      let response: Response;
      try {
        response = await doFetch(config.url, { method: "POST", headers, body, signal, redirect: "manual" });
      } catch (error) {
        throw new DeliveryError(`request failed: ${(error as Error).message}`, true);
      }
      await response.body?.cancel().catch(() => {});
      const failure = httpFailure(response.status, response.headers.get("retry-after"));
      if (failure) throw failure;
    },
  };
}
