import type { MessagesBody } from "../choose.ts";
import { errorBody, replyResponse } from "../sse.ts";
import type { Face } from "./face.ts";

/**
 * The Anthropic Messages API (Claude Code, and OpenCode's anthropic provider): POST
 * /v1/messages (SSE or JSON), /v1/messages/count_tokens, /v1/models, and `/`, Claude Code's
 * connectivity probe. Its bodies are the neutral shape already.
 */

const MODELS = ["claude-opus-4-5", "claude-sonnet-4-5", "claude-haiku-4-5"].map((id) => ({
  type: "model",
  id,
  display_name: id,
  created_at: "2025-01-01T00:00:00Z",
}));

export const anthropicFace: Face = {
  name: "anthropic",
  handles: (method, path) => method === "POST" && path === "/v1/messages",
  read: (body) => body as MessagesBody,
  reply: (request, body, _raw, spec, defaults, settle) =>
    replyResponse(request, body, spec, defaults, settle),
  other: (method, path, body) => apiResponse(method, path, body as MessagesBody),
};

function apiResponse(method: string, path: string, body: MessagesBody): Response | null {
  if (method === "POST" && path === "/v1/messages/count_tokens") {
    const text =
      JSON.stringify(body.messages ?? []) +
      JSON.stringify(body.system ?? "") +
      JSON.stringify(body.tools ?? []);
    return Response.json({ input_tokens: Math.max(1, Math.ceil(text.length / 4)) });
  }
  if (method === "GET" && path === "/v1/models") {
    return Response.json({
      data: MODELS,
      has_more: false,
      first_id: MODELS[0]!.id,
      last_id: MODELS.at(-1)!.id,
    });
  }
  if (method === "GET" && path.startsWith("/v1/models/")) {
    const model = MODELS.find((m) => m.id === path.slice("/v1/models/".length));
    return model
      ? Response.json(model)
      : Response.json(errorBody("not_found_error", "model not found"), { status: 404 });
  }
  if (path === "/" || path === "") return Response.json({ ok: true, service: "mock-anthropic" });
  return null;
}
