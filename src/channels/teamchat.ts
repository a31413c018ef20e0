import type { AgEvent } from "../events/bus.ts";
import type { EventName } from "../events/names.ts";
import { type ChannelTarget, DeliveryError, httpFailure } from "./channel.ts";
import { humanLinks } from "./link.ts";

/** SPEC's colour per event; every other event gets NEUTRAL_COLOUR. */
export const TEAMCHAT_COLOURS: Partial<Record<EventName, string>> = {
  "session.created": "#2eb886",
  "session.ended": "#9e9e9e",
  "status.working": "#1e88e5",
  "status.stall": "#f2c744",
  "status.dead": "#d32f2f",
  "status.error": "#d32f2f",
};
/** Blue-grey: visibly not one of SPEC's colours (session.ended's grey included). */
export const NEUTRAL_COLOUR = "#607d8b";

// The receiver's limits (Slack's, which most incoming-webhook receivers copy): a header holds
// 150 characters, a section 3000. A longer text gets the whole message refused with a 400.
const HEADER_MAX = 150;
const SECTION_MAX = 3000;
/** The notification preview: a line, not the whole detail. */
const FALLBACK_DETAIL_MAX = 300;
/** Enough of an error answer ("invalid_payload", "channel_not_found") to say what went wrong. */
const ERROR_BODY_MAX = 200;

export interface TeamchatOptions {
  url: string;
  /** null: every event. */
  events: readonly EventName[] | null;
  /** Posts to this channel instead of the webhook's own (empty: no override). */
  channel?: string;
  timeoutMs: number;
  /** Where the links of events that need a human point (config `dashboardUrl`). */
  dashboardUrl: string;
  version?: string;
  fetch?: typeof fetch;
}

/** Cuts to `max` characters with an ellipsis, never inside a surrogate pair. */
export function truncate(text: string, max: number): string {
  const chars = Array.from(text);
  return chars.length <= max ? text : `${chars.slice(0, max - 1).join("")}…`;
}

/** mrkdwn gives `&`, `<` and `>` meaning (links, `<!channel>` mentions): a session name must not. */
function escapeMrkdwn(text: string): string {
  return text.replaceAll("&", "&amp;").replaceAll("<", "&lt;").replaceAll(">", "&gt;");
}

/** A mrkdwn link: `&`, `<`, `>` escaped as everywhere in mrkdwn, and `|` (the label's separator) encoded. */
function mrkdwnLink(url: string, label: string): string {
  return `<${escapeMrkdwn(url).replaceAll("|", "%7C")}|${label}>`;
}

function title(event: AgEvent): string {
  return event.session ? `${event.event} · ${event.session.name}` : event.event;
}

/**
 * The incoming-webhook message: `text` for notifications and clients without blocks, and one
 * attachment whose colour bar carries SPEC's colour around the blocks (header, detail, context).
 * The detail goes out as plain_text so nothing an agent wrote can mention or link. An event that
 * needs a human ends its `text` with a link to the session's dashboard page (CONTRACT §10): the
 * text is shown by every receiver, above the attachment where blocks are shown too.
 */
export function teamchatPayload(
  event: AgEvent,
  channel?: string,
  link: string | null = null,
): Record<string, unknown> {
  const heading = title(event);
  const blocks: Record<string, unknown>[] = [
    { type: "header", text: { type: "plain_text", text: truncate(heading, HEADER_MAX) } },
  ];
  if (event.detail.trim() !== "") {
    blocks.push({ type: "section", text: { type: "plain_text", text: truncate(event.detail, SECTION_MAX) } });
  }
  const context = event.session
    ? [`session \`${event.session.id}\``, `\`${event.session.workDir}\``, event.timestamp]
    : [event.timestamp];
  blocks.push({
    type: "context",
    elements: [{ type: "mrkdwn", text: truncate(escapeMrkdwn(context.join(" · ")), SECTION_MAX) }],
  });
  const preview = event.detail.trim() === "" ? heading : `${heading}: ${event.detail}`;
  const summary = escapeMrkdwn(truncate(preview, FALLBACK_DETAIL_MAX));
  const text = link === null ? summary : `${summary}\n${mrkdwnLink(link, "Open in the dashboard")}`;
  const colour = TEAMCHAT_COLOURS[event.event] ?? NEUTRAL_COLOUR;
  return {
    ...(channel ? { channel } : {}),
    text,
    attachments: [{ color: colour, fallback: summary, blocks }],
  };
}

export function createTeamchatTarget(options: TeamchatOptions): ChannelTarget {
  const doFetch = options.fetch ?? fetch;
  const wanted = options.events ? new Set(options.events) : null;
  const linkOf = humanLinks(options.dashboardUrl);
  return {
    channel: "teamchat",
    // The path of an incoming-webhook URL is its secret: name it by origin only.
    name: new URL(options.url).origin,
    timeoutMs: options.timeoutMs,
    // One at a time keeps the channel's messages in the order of the events.
    concurrency: 1,
    accepts: (event) => wanted === null || wanted.has(event.event),
    async send(delivery, signal) {
      const body = JSON.stringify(teamchatPayload(delivery.event, options.channel, linkOf(delivery.event)));
      let response: Response;
      try {
        response = await doFetch(options.url, {
          method: "POST",
          headers: {
            "content-type": "application/json",
            "user-agent": `ag/${options.version ?? "0"}`,
            "x-svc-event": delivery.event.event,
            "x-svc-delivery": delivery.id,
          },
          body,
          signal,
          redirect: "manual",
        });
      } catch (error) {
        throw new DeliveryError(`request failed: ${(error as Error).message}`, true);
      }
      const failure = httpFailure(response.status, response.headers.get("retry-after"));
      if (!failure) {
        await response.body?.cancel().catch(() => {});
        return;
      }
      const answer = await response.text().catch(() => "");
      const reason = truncate(answer.trim(), ERROR_BODY_MAX);
      throw reason
        ? new DeliveryError(`${failure.message}: ${reason}`, failure.retryable, failure.retryAfterMs)
        : failure;
    },
  };
}
