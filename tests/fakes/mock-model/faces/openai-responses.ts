import type { MessagesBody } from "../choose.ts";
import {
  chunker,
  estimateTokens,
  pauseOf,
  type ReplyDefaults,
  randomId,
  replyPrelude,
  type Settle,
  sseResponse,
} from "../pacing.ts";
import type { MockReply } from "../rules.ts";
import type { Face } from "./face.ts";
import { contentText, type Item, readResponsesRequest } from "./openai-request.ts";
import { toCodexCall } from "./openai-tools.ts";

/**
 * The OpenAI Responses API (Codex CLI, through a custom `model_provider` with
 * `wire_api = "responses"`): POST …/responses, as SSE when `stream` (response.created, per output
 * item output_item.added → its deltas → output_item.done, then response.completed with the usage),
 * else JSON. An error is `{error: {message, type, code}}` with its status; a stream error is
 * `response.failed`. Codex 0.169.0 calls nothing else of a custom provider (no model list).
 */

type Send = (event: string, data: Record<string, unknown>) => void;

export const openaiResponsesFace: Face = {
  name: "openai-responses",
  handles: (method, path) => method === "POST" && /\/responses$/.test(path),
  read: (body) => readResponsesRequest(body),
  reply: replyResponses,
};

function errorResponse(status: number, type: string, message: string, headers: Record<string, string> = {}) {
  return Response.json(
    { error: { message, type, param: null, code: type } },
    { status, headers: { "x-request-id": randomId("req_"), ...headers } },
  );
}

/** The reply's output items, in the order the model "says" them. */
function outputItems(spec: MockReply, raw: Record<string, unknown>, system: string): Item[] {
  const context = {
    offered: new Map<string, Item>(
      (Array.isArray(raw.tools) ? (raw.tools as Item[]) : []).map((t) => [String(t.name ?? t.type), t]),
    ),
    cwd: system.match(/working directory:\s*(\S+)/i)?.[1] ?? process.cwd(),
    // "Approval policy is currently never. Do not provide the `sandbox_permissions` …"
    mayEscalate: !/Approval policy is currently never/i.test(system),
  };
  const items: Item[] = [];
  if (spec.thinking)
    items.push({
      type: "reasoning",
      id: randomId("rs_"),
      summary: [{ type: "summary_text", text: spec.thinking }],
    });
  const message = (text: string): Item => ({
    type: "message",
    id: randomId("msg_"),
    role: "assistant",
    status: "completed",
    content: [{ type: "output_text", text, annotations: [] }],
  });
  if (spec.text) items.push(message(spec.text));
  for (const tool of spec.tools ?? (spec.tool ? [spec.tool] : [])) items.push(toCodexCall(tool, context));
  if (spec.blocks) items.push(...(spec.blocks as Item[]));
  return items.length ? items : [message("")];
}

/** Codex counts cached tokens inside input_tokens (input_tokens_details.cached_tokens of them). */
function usageOf(raw: Record<string, unknown>, items: Item[], spec: MockReply, defaults: ReplyDefaults) {
  const given = { ...defaults.usage, ...spec.usage } as Record<string, number | undefined>;
  const cached = given.cache_read_input_tokens ?? estimateTokens(JSON.stringify(raw.tools ?? []));
  const input = given.input_tokens ?? estimateTokens(JSON.stringify(raw.input ?? [])) + cached;
  const output = given.output_tokens ?? estimateTokens(items.map((i) => JSON.stringify(i)).join(""));
  return {
    input_tokens: input,
    input_tokens_details: { cached_tokens: cached },
    output_tokens: output,
    output_tokens_details: { reasoning_tokens: spec.thinking ? estimateTokens(spec.thinking) : 0 },
    total_tokens: input + output,
  };
}

async function replyResponses(
  request: Request,
  body: MessagesBody,
  raw: Record<string, unknown>,
  spec: MockReply,
  defaults: ReplyDefaults,
  settle: Settle,
): Promise<Response> {
  const early = await replyPrelude(request, spec, settle, (e, headers) =>
    errorResponse(e.status ?? 500, e.type ?? "server_error", e.message ?? "mock error", headers),
  );
  if (early) return early;
  const items = outputItems(spec, raw, String(body.system ?? ""));
  const response = {
    id: randomId("resp_"),
    object: "response",
    created_at: Math.floor(Date.now() / 1000),
    model: body.model ?? "gpt-mock",
  };
  const usage = usageOf(raw, items, spec, defaults);
  if (!body.stream) {
    settle(200);
    return Response.json({ ...response, status: "completed", output: items, usage });
  }
  const cut = chunker(spec, defaults);
  const deltas = items.map((item) => cut(streamedText(item)));
  const pause = pauseOf(
    spec,
    defaults,
    deltas.reduce((n, d) => n + d.length, 0),
  );
  let sequence = 0;
  return sseResponse(
    request,
    settle,
    async (sendEvent, open) => {
      const send: Send = (event, data) => sendEvent(event, { ...data, sequence_number: sequence++ });
      const inProgress = { ...response, status: "in_progress", output: [] };
      send("response.created", { response: inProgress });
      send("response.in_progress", { response: inProgress });
      for (let index = 0; index < items.length && open(); index++) {
        await streamItem(send, open, items[index]!, index, deltas[index]!, pause);
        if (spec.stream_error && index === items.length - 1) {
          const { type = "server_error", message = "mock stream error" } = spec.stream_error;
          send("response.failed", {
            response: { ...response, status: "failed", output: [], error: { code: type, message } },
          });
          return;
        }
        send("response.output_item.done", { output_index: index, item: items[index] });
      }
      send("response.completed", { response: { ...response, status: "completed", output: items, usage } });
    },
    { "x-request-id": randomId("req_") },
  );
}

/** The text an item streams as deltas. */
function streamedText(item: Item): string {
  if (item.type === "message") return contentText(item.content);
  if (item.type === "reasoning") return String((item.summary as Array<{ text?: string }>)[0]?.text ?? "");
  if (item.type === "function_call") return String(item.arguments);
  if (item.type === "custom_tool_call") return String(item.input);
  return "";
}

/** Per item kind: what it starts as, the delta event and the field that carries a delta. */
const DELTAS: Record<string, { start: Item; delta: string; done: (text: string) => [string, Item] }> = {
  message: {
    start: { content: [] },
    delta: "response.output_text.delta",
    done: (text) => ["response.output_text.done", { content_index: 0, text }],
  },
  reasoning: {
    start: { summary: [] },
    delta: "response.reasoning_summary_text.delta",
    done: (text) => ["response.reasoning_summary_text.done", { summary_index: 0, text }],
  },
  function_call: {
    start: { arguments: "" },
    delta: "response.function_call_arguments.delta",
    done: (text) => ["response.function_call_arguments.done", { arguments: text }],
  },
  custom_tool_call: {
    start: { input: "" },
    delta: "response.custom_tool_call_input.delta",
    done: (text) => ["response.custom_tool_call_input.done", { input: text }],
  },
};

async function streamItem(
  send: Send,
  open: () => boolean,
  item: Item,
  index: number,
  deltas: string[],
  pause: number,
) {
  const kind = DELTAS[item.type ?? ""];
  const at = { item_id: String(item.id), output_index: index };
  send("response.output_item.added", {
    output_index: index,
    item: { ...item, ...kind?.start, status: "in_progress" },
  });
  if (!kind) return;
  const part =
    item.type === "message" ? { content_index: 0 } : item.type === "reasoning" ? { summary_index: 0 } : {};
  for (const delta of deltas) {
    if (!open()) return;
    send(kind.delta, { ...at, ...part, delta });
    if (pause) await Bun.sleep(pause);
  }
  const [event, data] = kind.done(deltas.join(""));
  send(event, { ...at, ...data });
}
