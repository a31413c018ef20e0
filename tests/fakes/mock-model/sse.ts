import type { MessagesBody } from "./choose.ts";
import {
  chunker,
  estimateTokens,
  pauseOf,
  type ReplyDefaults,
  randomId,
  replyPrelude,
  type Settle,
  sseResponse,
  streamMsOf,
} from "./pacing.ts";
import type { MockReply } from "./rules.ts";

export type { ReplyDefaults, Settle } from "./pacing.ts";

/**
 * Turns a reply spec into a Messages API response: an error, a JSON message, or the SSE stream
 * (message_start, ping, content_block_start/delta/stop per block, message_delta, message_stop).
 */

type ContentBlock = Record<string, unknown> & { type: string };

const json = (status: number, body: unknown, headers: Record<string, string> = {}) =>
  Response.json(body, { status, headers: { "request-id": randomId("req_mock_"), ...headers } });

export function errorBody(type: string, message: string) {
  return { type: "error", error: { type, message }, request_id: randomId("req_mock_") };
}

function blocksOf(spec: MockReply): ContentBlock[] {
  const out: ContentBlock[] = spec.blocks ? (spec.blocks as ContentBlock[]).map((b) => ({ ...b })) : [];
  if (!spec.blocks) {
    if (spec.thinking) out.push({ type: "thinking", thinking: spec.thinking });
    if (spec.text) out.push({ type: "text", text: spec.text });
    for (const tool of spec.tools ?? (spec.tool ? [spec.tool] : [])) {
      out.push({ type: "tool_use", name: tool.name, input: tool.input ?? {} });
    }
  }
  if (!out.length) out.push({ type: "text", text: "" });
  return out.map((b) =>
    b.type === "tool_use"
      ? { id: randomId("toolu_01"), ...b }
      : b.type === "thinking"
        ? { signature: randomId("", 64), ...b }
        : b,
  );
}

function usageFor(body: MessagesBody, blocks: ContentBlock[], spec: MockReply, defaults: ReplyDefaults) {
  const output = blocks
    .map((b) => (b.text ?? b.thinking ?? JSON.stringify(b.input ?? "")) as string)
    .join("");
  return {
    input_tokens: estimateTokens(JSON.stringify(body.messages ?? [])),
    cache_creation_input_tokens: 0,
    cache_read_input_tokens: estimateTokens(
      JSON.stringify(body.system ?? "") + JSON.stringify(body.tools ?? []),
    ),
    output_tokens: estimateTokens(output),
    ...defaults.usage,
    ...spec.usage,
  };
}

export async function replyResponse(
  request: Request,
  body: MessagesBody,
  spec: MockReply,
  defaults: ReplyDefaults,
  settle: Settle,
): Promise<Response> {
  const early = await replyPrelude(request, spec, settle, (e, headers) => {
    if (e.should_retry !== undefined) headers["x-should-retry"] = String(e.should_retry);
    return json(e.status ?? 500, errorBody(e.type ?? "api_error", e.message ?? "mock error"), headers);
  });
  if (early) return early;
  const blocks = blocksOf(spec);
  const usage = usageFor(body, blocks, spec, defaults);
  const stopReason =
    spec.stop_reason ?? (blocks.some((b) => b.type === "tool_use") ? "tool_use" : "end_turn");
  const message = {
    id: randomId("msg_01"),
    type: "message",
    role: "assistant",
    model: body.model ?? "claude-mock",
    content: blocks,
    stop_reason: stopReason,
    stop_sequence: null,
    usage,
  };
  if (!body.stream) {
    if (spec.stream_error) {
      // Claude Code retries a failed stream without streaming: fail that too.
      const type = spec.stream_error.type ?? "overloaded_error";
      const status =
        ({ overloaded_error: 529, rate_limit_error: 429 } as Record<string, number>)[type] ?? 500;
      settle(status);
      return json(status, errorBody(type, spec.stream_error.message ?? "mock stream error"));
    }
    const streamMs = streamMsOf(spec);
    if (streamMs) await Bun.sleep(streamMs);
    settle(200);
    return json(200, message);
  }
  return sseStream(request, blocks, message, spec, defaults, settle);
}

/** Every block cut into deltas, paced over stream_ms (or chunk_ms each). */
function sseStream(
  request: Request,
  blocks: ContentBlock[],
  message: Record<string, unknown> & { usage: { output_tokens: number } },
  spec: MockReply,
  defaults: ReplyDefaults,
  settle: Settle,
): Response {
  const cut = chunker(spec, defaults);
  const plan = blocks.map((b) => {
    if (b.type === "text")
      return {
        start: { type: "text", text: "" },
        deltas: cut(b.text as string).map((t) => ({ type: "text_delta", text: t })),
      };
    if (b.type === "thinking") {
      const deltas = cut(b.thinking as string).map((t) => ({ type: "thinking_delta", thinking: t }));
      return {
        start: { type: "thinking", thinking: "", signature: "" },
        deltas: [...deltas, { type: "signature_delta", signature: b.signature }],
      };
    }
    if (b.type === "tool_use") {
      const deltas = cut(JSON.stringify(b.input)).map((t) => ({ type: "input_json_delta", partial_json: t }));
      return { start: { type: "tool_use", id: b.id, name: b.name, input: {} }, deltas };
    }
    return { start: b, deltas: [] as Record<string, unknown>[] };
  });
  const pause = pauseOf(
    spec,
    defaults,
    plan.reduce((n, p) => n + p.deltas.length, 0),
  );
  const produce = async (
    send: (event: string, data: Record<string, unknown>) => void,
    open: () => boolean,
  ) => {
    send("message_start", {
      message: { ...message, content: [], stop_reason: null, usage: { ...message.usage, output_tokens: 1 } },
    });
    send("ping", {});
    for (let i = 0; i < plan.length && open(); i++) {
      send("content_block_start", { index: i, content_block: plan[i]!.start });
      for (const delta of plan[i]!.deltas) {
        if (!open()) break;
        send("content_block_delta", { index: i, delta });
        if (pause) await Bun.sleep(pause);
      }
      if (spec.stream_error && i === plan.length - 1) {
        const { type = "overloaded_error", message: text = "mock stream error" } = spec.stream_error;
        send("error", { error: { type, message: text } });
        return;
      }
      send("content_block_stop", { index: i });
    }
    send("message_delta", {
      delta: { stop_reason: message.stop_reason, stop_sequence: null },
      usage: { output_tokens: message.usage.output_tokens },
    });
    send("message_stop", {});
  };
  return sseResponse(request, settle, produce, { "request-id": randomId("req_mock_") });
}
