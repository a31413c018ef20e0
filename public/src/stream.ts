/**
 * The event stream (GET /v1/events). EventSource's own reconnect reuses its URL, whose token is
 * single use, so every (re)connection is ours: a new token, and `?lastEventId=` (a new
 * EventSource sends no Last-Event-ID header) so the server replays what happened in between.
 */
import { signal } from "@preact/signals";
import { EVENT_NAMES } from "../../src/events/names.ts";
import { urlToken } from "./api.ts";
import type { AgEvent } from "./types.ts";

/** Reconnects wait 1 s, 2 s, 4 s … up to 30 s; a stream that opens starts the sequence again. */
const BACKOFF_FIRST_MS = 1000;
const BACKOFF_MAX_MS = 30_000;

export type LiveState = "off" | "connecting" | "live" | "reconnecting";
export const liveState = signal<LiveState>("connecting");

export interface StreamHooks {
  /** Before (re)connecting while nothing is loaded: "ok", "locked" (token refused) or "down". */
  load(): Promise<"ok" | "locked" | "down">;
  /** The stream opened: what happened before it must be read (settles once it has been). */
  opened(): Promise<unknown>;
  event(event: AgEvent): void;
  /** Events were lost (too far behind, or the server restarted): the REST view is the truth. */
  gap(): void;
  refused(): void;
}

export function createStream(hooks: StreamHooks) {
  let source: EventSource | null = null;
  let lastEventId: string | null = null;
  let loaded = false;
  let attempt = 0;
  let timer: ReturnType<typeof setTimeout> | null = null;
  /** Bumped by every connect and stop: an older connect still awaiting the network gives up. */
  let generation = 0;

  function stop() {
    generation++;
    if (timer !== null) clearTimeout(timer);
    timer = null;
    source?.close();
    source = null;
  }

  function retry(at: number) {
    if (at !== generation) return;
    const delay = Math.min(BACKOFF_FIRST_MS * 2 ** attempt, BACKOFF_MAX_MS);
    attempt++;
    liveState.value = "reconnecting";
    timer = setTimeout(connect, delay);
  }

  async function url(): Promise<string> {
    const query = new URLSearchParams();
    const token = await urlToken();
    if (token) query.set("token", token);
    if (lastEventId !== null) query.set("lastEventId", lastEventId);
    const search = query.toString();
    return search ? `/v1/events?${search}` : "/v1/events";
  }

  async function connect() {
    stop();
    const at = generation;
    if (attempt === 0) liveState.value = "connecting";
    let target: string;
    try {
      if (!loaded) {
        const result = await hooks.load();
        if (result === "locked" || at !== generation) return;
        if (result !== "ok") return retry(at);
        loaded = true;
      }
      target = await url();
    } catch (error) {
      if (at !== generation) return;
      if ((error as { status?: number }).status === 401) return hooks.refused();
      return retry(at);
    }
    if (at !== generation) return;
    const opened = new EventSource(target);
    source = opened;
    opened.addEventListener("open", () => {
      attempt = 0;
      // What happened before is read once more, now that the stream is open and nothing can slip
      // in between: without an id the server starts with the next event, and after ag restarted
      // its ids start again, so a replay from our id may miss what the new run published.
      // "live" says the page is current: shown once that read has answered, not before it is sent.
      void hooks.opened().finally(() => {
        if (source === opened) liveState.value = "live";
      });
    });
    const onEvent = (message: MessageEvent<string>) => {
      if (message.lastEventId) lastEventId = message.lastEventId;
      try {
        hooks.event({ id: Number(message.lastEventId), ...JSON.parse(message.data) } as AgEvent);
      } catch {
        // A message the page cannot read changes nothing it shows.
      }
    };
    // EventSource has no wildcard listener, and an event nobody listens to does not tell us its
    // id: listening to every name of the catalog keeps the last id current.
    for (const name of EVENT_NAMES) opened.addEventListener(name, onEvent);
    opened.addEventListener("gap", () => hooks.gap());
    opened.addEventListener("error", () => {
      if (source !== opened) return;
      opened.close(); // before EventSource retries by itself with the spent token
      source = null;
      retry(at);
    });
  }

  return {
    connect,
    /** A new token was given, or the old one was refused: start again from a fresh load. */
    restart() {
      loaded = false;
      attempt = 0;
      connect();
    },
    lock() {
      stop();
      loaded = false;
      attempt = 0;
      liveState.value = "off";
    },
    /** Waiting to reconnect: try now. */
    nudge() {
      if (timer !== null) connect();
    },
    get loaded() {
      return loaded;
    },
  };
}
