import { AgError } from "../shared/errors.ts";
import type { ApiClient } from "./client.ts";

/**
 * The CLI's side of the server's SSE streams (src/events/sse.ts writes them): a parser for the
 * `id:` / `event:` / `data:` blocks, and a follower that reconnects with Last-Event-ID.
 */

/** One event as the stream carries it: `data` is the bus event minus its id. */
export interface StreamedEvent {
  /** null for messages without an id (the `gap` notice). */
  id: number | null;
  event: string;
  timestamp: string;
  session?: { id: string; name: string; workDir: string };
  detail: string;
  meta: Record<string, unknown>;
}

/** Feeds text in any chunking; returns the events whose block is complete. Comments are skipped. */
export function createSseParser(): (chunk: string) => StreamedEvent[] {
  let buffer = "";
  return (chunk) => {
    buffer += chunk.replace(/\r\n?/g, "\n");
    const blocks = buffer.split("\n\n");
    buffer = blocks.pop() ?? "";
    const events: StreamedEvent[] = [];
    for (const block of blocks) {
      const fields: Record<string, string> = {};
      for (const line of block.split("\n")) {
        if (line === "" || line.startsWith(":")) continue;
        const colon = line.indexOf(":");
        const name = colon === -1 ? line : line.slice(0, colon);
        const value = colon === -1 ? "" : line.slice(colon + 1).replace(/^ /, "");
        // Per the SSE format, several data lines join with newlines; ours always send one.
        fields[name] = name === "data" && fields.data !== undefined ? `${fields.data}\n${value}` : value;
      }
      if (fields.data === undefined) continue;
      const data = JSON.parse(fields.data) as Omit<StreamedEvent, "id">;
      const id = fields.id !== undefined && /^\d+$/.test(fields.id) ? Number(fields.id) : null;
      events.push({ ...data, event: fields.event ?? data.event, meta: data.meta ?? {}, id });
    }
    return events;
  };
}

export interface FollowOptions {
  signal: AbortSignal;
  /** Return true to stop following. */
  onEvent(event: StreamedEvent): boolean;
  /** The stream is open (the server holds our subscription from here on). */
  onOpen?(): void;
  /** The stream dropped and will be opened again. */
  onReconnect?(why: string): void;
  /** Give up after the server has not answered for this long (ms). */
  giveUpAfterMs?: number;
}

/**
 * Follows `path` until `onEvent` says stop ("stopped") or the signal aborts ("aborted"). A stream
 * the server ends (client timeout, restart) or that breaks is opened again with the last event's
 * id as Last-Event-ID, so nothing the server still holds is missed or repeated. An error answer
 * (404, 401) ends the follow with that error; an unreachable server is retried with backoff.
 */
export async function followEvents(
  client: ApiClient,
  path: string,
  options: FollowOptions,
): Promise<"stopped" | "aborted"> {
  const { signal } = options;
  let lastEventId: number | null = null;
  let delayMs = 250;
  let failingSince: number | null = null;
  while (!signal.aborted) {
    let body: ReadableStream<Uint8Array>;
    try {
      const headers: Record<string, string> =
        lastEventId === null ? {} : { "last-event-id": String(lastEventId) };
      body = await client.stream(path, { headers, signal });
    } catch (error) {
      if (signal.aborted) break;
      if (!(error instanceof AgError) || error.code !== "SERVER_UNREACHABLE") throw error;
      failingSince ??= Date.now();
      if (Date.now() - failingSince > (options.giveUpAfterMs ?? 30_000)) throw error;
      options.onReconnect?.(error.message);
      await sleep(delayMs, signal);
      delayMs = Math.min(delayMs * 2, 5_000);
      continue;
    }
    failingSince = null;
    delayMs = 250;
    options.onOpen?.();
    const outcome = await readEvents(body, (event) => {
      if (event.id !== null) lastEventId = event.id;
      return options.onEvent(event) === true;
    });
    if (outcome === "stopped") return "stopped";
    if (signal.aborted) break;
    options.onReconnect?.(outcome === "ended" ? "the server closed the stream" : "the stream broke");
  }
  return "aborted";
}

async function readEvents(
  body: ReadableStream<Uint8Array>,
  handle: (event: StreamedEvent) => boolean,
): Promise<"stopped" | "ended" | "broken"> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  const parse = createSseParser();
  for (;;) {
    let chunk: Awaited<ReturnType<typeof reader.read>>;
    try {
      chunk = await reader.read();
    } catch {
      return "broken";
    }
    if (chunk.done) return "ended";
    for (const event of parse(decoder.decode(chunk.value, { stream: true }))) {
      if (handle(event)) {
        await reader.cancel().catch(() => {});
        return "stopped";
      }
    }
  }
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    }
    signal.addEventListener("abort", done, { once: true });
  });
}
