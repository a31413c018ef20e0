import type { AgEvent } from "../events/bus.ts";

/** CONTRACT §5: the channel names of dead letters, health and the CLI. */
export const CHANNEL_NAMES = ["webhook", "chat", "teamchat", "email"] as const;
export type ChannelName = (typeof CHANNEL_NAMES)[number];

/** One event on its way to one target; `id` is stable across retries (X-Svc-Delivery). */
export interface Delivery {
  id: string;
  event: AgEvent;
  /** 1 for the first try. */
  attempt: number;
}

/**
 * Why a send failed, and whether trying again can help. CONTRACT §5: network errors, timeouts,
 * 408, 429 and 5xx are worth a retry (429's Retry-After honoured up to 60 s); any other 4xx goes
 * straight to the dead letters.
 */
export class DeliveryError extends Error {
  override readonly name = "DeliveryError";
  constructor(
    message: string,
    readonly retryable: boolean,
    /** The receiver asked us to wait this long before the next try. */
    readonly retryAfterMs?: number,
  ) {
    super(message);
  }
}

/** The usual answer of an HTTP receiver, as a DeliveryError (or nothing for 2xx). */
export function httpFailure(status: number, retryAfter: string | null): DeliveryError | null {
  if (status >= 200 && status < 300) return null;
  const retryable = status === 408 || status === 429 || status >= 500;
  return new DeliveryError(`HTTP ${status}`, retryable, parseRetryAfter(retryAfter));
}

/** `Retry-After` in seconds or as an HTTP date, in ms (undefined when absent or unreadable). */
export function parseRetryAfter(value: string | null, now = Date.now()): number | undefined {
  if (!value) return undefined;
  const seconds = Number(value);
  if (Number.isFinite(seconds) && seconds >= 0) return seconds * 1000;
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

/**
 * One destination of one channel (a webhook URL, the bot's group chat, the SMTP server). The
 * dispatcher owns queueing, retries, dead letters and health; a target only knows how to send.
 */
export interface ChannelTarget {
  readonly channel: ChannelName;
  /** Names the target in health and dead letters without secrets (e.g. the webhook's origin). */
  readonly name: string;
  /** Does this target want this event (its filter)? Called once per event, on the publisher's turn. */
  accepts(event: AgEvent): boolean;
  /** Sends, or throws (a DeliveryError says whether to retry). Must give up when `signal` aborts. */
  send(delivery: Delivery, signal: AbortSignal): Promise<void>;
  /** How long one try may take (the dispatcher aborts it after). */
  readonly timeoutMs: number;
  /** Deliveries in flight at once; 1 keeps the order of events (chat, email). */
  readonly concurrency?: number;
  /** Stops background work (polling, pooled connections). */
  close?(): Promise<void> | void;
}
