import type { MessagesBody } from "../choose.ts";
import {
  estimateTokens,
  type ReplyDefaults,
  randomId,
  replyPrelude,
  type Settle,
  streamMsOf,
} from "../pacing.ts";
import type { MockReply } from "../rules.ts";
import type { Part } from "./gemini.ts";
import { planContext, toGeminiCall } from "./gemini-tools.ts";

/**
 * A reply spec as the Gemini API answers: a Google error body, one GenerateContentResponse, or its
 * SSE stream (`data: <GenerateContentResponse>` frames: text cut into chunks, thoughts and function
 * calls whole, finishReason and the full usageMetadata on the last frame, which the CLI records as
 * the message's tokens).
 */

const STATUS: Record<number, string> = {
  400: "INVALID_ARGUMENT",
  401: "UNAUTHENTICATED",
  403: "PERMISSION_DENIED",
  404: "NOT_FOUND",
  429: "RESOURCE_EXHAUSTED",
  500: "INTERNAL",
  503: "UNAVAILABLE",
};

export function googleError(status: number, message: string, headers: Record<string, string> = {}) {
  // 529 is Anthropic's "overloaded"; Google says 503.
  const code = status === 529 ? 503 : status;
  return Response.json(
    { error: { code, message, status: STATUS[code] ?? "UNKNOWN" } },
    { status: code, headers },
  );
}

export async function geminiReply(
  request: Request,
  body: MessagesBody,
  raw: Record<string, unknown>,
  spec: MockReply,
  defaults: ReplyDefaults,
  settle: Settle,
): Promise<Response> {
  const early = await replyPrelude(request, spec, settle, (e, headers) =>
    googleError(e.status ?? 500, e.message ?? "mock error", headers),
  );
  if (early) return early;
  const parts = partsOf(body, raw, spec);
  const usageMetadata = usageOf(raw, parts, spec, defaults);
  const frame = { modelVersion: body.model ?? "gemini-mock", responseId: randomId("mock-", 20) };
  const finishReason = spec.stop_reason ?? "STOP";
  const streamMs = streamMsOf(spec);
  if (body.stream)
    return sse(request, parts, { ...frame, usageMetadata, finishReason }, spec, defaults, settle);
  if (spec.stream_error) {
    settle(503);
    return googleError(503, spec.stream_error.message ?? "mock stream error");
  }
  if (streamMs) await Bun.sleep(streamMs);
  settle(200);
  return Response.json({
    candidates: [{ content: { role: "model", parts }, finishReason, index: 0 }],
    usageMetadata,
    ...frame,
  });
}

function partsOf(body: MessagesBody, raw: Record<string, unknown>, spec: MockReply): Part[] {
  // Side requests with a JSON response schema (model router, next speaker, loop check).
  const config = (raw.generationConfig ?? {}) as Record<string, unknown>;
  if (!body.tools?.length && /json/i.test(String(config.responseMimeType ?? "")))
    return [{ text: jsonFor(config.responseJsonSchema ?? config.responseSchema) }];
  const cwd = String(body.system ?? "").match(/Working directory:\s*(\S+)/)?.[1] ?? process.cwd();
  const plan = planContext(raw, cwd);
  const parts: Part[] = [];
  if (spec.thinking) parts.push({ text: spec.thinking, thought: true });
  if (spec.text) parts.push({ text: spec.text });
  for (const tool of spec.tools ?? (spec.tool ? [spec.tool] : []))
    parts.push({ functionCall: toGeminiCall(tool, plan) });
  return parts.length ? parts : [{ text: "" }];
}

function usageOf(raw: Record<string, unknown>, parts: Part[], spec: MockReply, defaults: ReplyDefaults) {
  const usage = { ...defaults.usage, ...spec.usage };
  const prompt =
    usage.input_tokens ??
    estimateTokens(JSON.stringify(raw.contents ?? []) + JSON.stringify(raw.systemInstruction ?? ""));
  const text = parts.filter((p) => !p.thought).map((p) => p.text ?? JSON.stringify(p.functionCall ?? ""));
  const candidates = usage.output_tokens ?? estimateTokens(text.join(""));
  const thoughts = spec.thinking ? estimateTokens(spec.thinking) : 0;
  const cached = usage.cache_read_input_tokens ?? 0;
  return {
    promptTokenCount: prompt,
    candidatesTokenCount: candidates,
    ...(cached ? { cachedContentTokenCount: cached } : {}),
    ...(thoughts ? { thoughtsTokenCount: thoughts } : {}),
    totalTokenCount: prompt + candidates + thoughts,
  };
}

interface Final {
  modelVersion: string;
  responseId: string;
  usageMetadata: { promptTokenCount: number };
  finishReason: string;
}

/** Text parts cut into chunks of chunk_chars, paced over stream_ms (or chunk_ms each). */
function sse(
  request: Request,
  parts: Part[],
  final: Final,
  spec: MockReply,
  defaults: ReplyDefaults,
  settle: Settle,
): Response {
  const size = spec.chunk_chars ?? defaults.chunk_chars;
  const chunks = parts.flatMap((p): Part[] => {
    if (typeof p.text !== "string" || p.thought || p.text.length <= size) return [p];
    return Array.from({ length: Math.ceil(p.text.length / size) }, (_, i) => ({
      ...p,
      text: p.text!.slice(i * size, (i + 1) * size),
    }));
  });
  const streamMs = streamMsOf(spec);
  const pause = streamMs !== undefined ? streamMs / chunks.length : (spec.chunk_ms ?? defaults.chunk_ms);
  const { usageMetadata, finishReason, ...frame } = final;
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
      const send = (data: unknown) => {
        if (!closed) controller.enqueue(encoder.encode(`data: ${JSON.stringify(data)}\r\n\r\n`));
      };
      for (const [i, part] of chunks.entries()) {
        if (closed) return;
        const last = i === chunks.length - 1;
        const candidate = { content: { role: "model", parts: [part] }, index: 0 };
        if (last && spec.stream_error) {
          send({ candidates: [candidate], ...frame });
          // The API's mid-stream failure: an error object in the stream, no finish reason.
          const message = spec.stream_error.message ?? "mock stream error";
          send({ error: { code: 503, message, status: "UNAVAILABLE" } });
          break;
        }
        // Every frame carries the prompt's count; the last one the whole usage.
        const usage = last
          ? usageMetadata
          : {
              promptTokenCount: usageMetadata.promptTokenCount,
              totalTokenCount: usageMetadata.promptTokenCount,
            };
        send({
          candidates: [{ ...candidate, ...(last ? { finishReason } : {}) }],
          usageMetadata: usage,
          ...frame,
        });
        if (pause && !last) await Bun.sleep(pause);
      }
      if (closed) return;
      closed = true;
      controller.close();
      settle(200);
    },
    cancel: hangUp,
  });
  return new Response(stream, {
    headers: { "content-type": "text/event-stream", "cache-control": "no-cache" },
  });
}

/** A plausible answer for a side request's JSON schema. */
function jsonFor(schema: unknown): string {
  const text = JSON.stringify(schema ?? {});
  if (/model_choice/.test(text)) return JSON.stringify({ reasoning: "mock", model_choice: "flash" });
  if (/next_speaker/.test(text)) return JSON.stringify({ reasoning: "mock", next_speaker: "user" });
  return JSON.stringify(instanceOf(schema as Record<string, unknown>) ?? {});
}

/** The smallest instance of a JSON schema: first enum values, empty arrays, zeros. */
function instanceOf(schema: Record<string, unknown> | undefined): unknown {
  if (!schema) return null;
  if (Array.isArray(schema.enum) && schema.enum.length) return schema.enum[0];
  const type = String(schema.type ?? "").toLowerCase();
  if (type === "object") {
    const properties = (schema.properties as Record<string, Record<string, unknown>>) ?? {};
    return Object.fromEntries(Object.entries(properties).map(([k, v]) => [k, instanceOf(v)]));
  }
  return (
    ({ array: [], string: "mock", number: 0, integer: 0, boolean: false } as Record<string, unknown>)[type] ??
    null
  );
}
