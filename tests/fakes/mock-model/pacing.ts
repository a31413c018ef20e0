import type { MockError, MockReply } from "./rules.ts";

/**
 * What every face does the same way whatever its wire format: ids, token estimates, a reply's
 * delay or hang, and the pace of a stream (stream_s over all deltas, else chunk_ms each).
 */

export interface ReplyDefaults {
  chunk_chars: number;
  chunk_ms: number;
  usage?: Record<string, number>;
}

/** How the exchange ended: the HTTP status sent in full, or "aborted" when the client hung up. */
export type Settle = (status: number | "aborted") => void;

export const randomId = (prefix: string, length = 24) =>
  prefix +
  Buffer.from(crypto.getRandomValues(new Uint8Array(64)))
    .toString("base64")
    .replace(/[^A-Za-z0-9]/g, "")
    .slice(0, length);

export const estimateTokens = (text: string) => Math.max(1, Math.ceil(text.length / 4));

/** A reply's number, which may have come from a template ("{{1|10}}" → "10"). */
export const numberOf = (v: number | string | undefined) =>
  v === undefined || v === "" ? undefined : Number(v);

/**
 * The reply's delay, then, for a `hang`, the wait for the client to hang up (an interrupt): the
 * response to give then. Null when the reply goes on.
 */
export async function delayOrHang(
  request: Request,
  spec: MockReply,
  settle: Settle,
): Promise<Response | null> {
  const delay = numberOf(spec.delay_ms) ?? (numberOf(spec.delay_s) ?? 0) * 1000;
  if (delay) await Bun.sleep(delay);
  if (!spec.hang) return null;
  await new Promise((resolve) => request.signal.addEventListener("abort", resolve, { once: true }));
  settle("aborted");
  return new Response(null, { status: 499 });
}

/**
 * What every face does first with a reply: its delay or hang (delayOrHang), then an error in the
 * provider's own body (`error` gets the headers with retry-after already set). Null: go on.
 */
export async function replyPrelude(
  request: Request,
  spec: MockReply,
  settle: Settle,
  error: (e: MockError, headers: Record<string, string>) => Response,
): Promise<Response | null> {
  const hung = await delayOrHang(request, spec, settle);
  if (hung || !spec.error) return hung;
  const headers: Record<string, string> = {};
  if (spec.error.retry_after !== undefined) headers["retry-after"] = String(spec.error.retry_after);
  settle(spec.error.status ?? 500);
  return error(spec.error, headers);
}

/** How long the whole stream should take, when the reply says. */
export function streamMsOf(spec: MockReply): number | undefined {
  return (
    numberOf(spec.stream_ms) ?? (spec.stream_s !== undefined ? numberOf(spec.stream_s)! * 1000 : undefined)
  );
}

/** Text cut into the deltas a stream sends (one empty delta for empty text). */
export function chunker(spec: MockReply, defaults: ReplyDefaults): (text: string) => string[] {
  const size = spec.chunk_chars ?? defaults.chunk_chars;
  return (text) => {
    const out: string[] = [];
    for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size));
    return out.length ? out : [""];
  };
}

/** The pause after each of `deltas` deltas. */
export function pauseOf(spec: MockReply, defaults: ReplyDefaults, deltas: number): number {
  const streamMs = streamMsOf(spec);
  return streamMs !== undefined ? streamMs / (deltas || 1) : (spec.chunk_ms ?? defaults.chunk_ms);
}

/**
 * One SSE response whose events `produce` writes: `send` drops everything once the client hung
 * up (settled "aborted"); the stream settles 200 when `produce` returns.
 */
export function sseResponse(
  request: Request,
  settle: Settle,
  produce: (
    send: (event: string, data: Record<string, unknown>) => void,
    open: () => boolean,
  ) => Promise<void>,
  headers: Record<string, string> = {},
): Response {
  const encoder = new TextEncoder();
  let closed = false;
  const hangUp = () => {
    if (closed) return;
    closed = true;
    settle("aborted");
  };
  request.signal.addEventListener("abort", hangUp, { once: true });
  const stream = new ReadableStream<Uint8Array>({
    async start(controller) {
      const send = (event: string, data: Record<string, unknown>) => {
        if (!closed)
          controller.enqueue(
            encoder.encode(`event: ${event}\ndata: ${JSON.stringify({ type: event, ...data })}\n\n`),
          );
      };
      await produce(send, () => !closed);
      if (closed) return;
      closed = true;
      controller.close();
      settle(200);
    },
    cancel: hangUp,
  });
  return new Response(stream, {
    headers: { "content-type": "text/event-stream; charset=utf-8", "cache-control": "no-cache", ...headers },
  });
}
