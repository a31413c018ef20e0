import { isObject, type Json, num, parseJsonLine, str } from "../json-fields.ts";
import type { TokenCounts } from "../vocabulary.ts";

/**
 * One line of a Codex rollout (`$CODEX_HOME/sessions/YYYY/MM/DD/rollout-<time>-<thread>.jsonl`,
 * 0.169.0 and 0.171.0 alike) as a typed entry: `{timestamp, ordinal, type, payload}`, where
 * `type` is session_meta, turn_context, response_item (what the model saw and said), event_msg
 * (what happened: turn started or completed, items done, token counts), token_usage_record,
 * world_state…
 */

export type RolloutEntry = {
  timestamp: string | null;
  /** The line's own sequence number in its rollout (`ordinal`): what happened when, whatever the file order. */
  ordinal: number | null;
} & (
  | { kind: "meta"; threadId: string; cwd: string | null; forkedFrom: string | null }
  /** A turn begins (task_started): `turnId` names it, and every line of it. */
  | { kind: "turn_start"; turnId: string | null }
  | { kind: "context"; model: string | null; cwd: string | null }
  /** A person's prompt; `turnId` is the hooks' turn_id (the prompt's id in both). */
  | { kind: "prompt"; text: string; turnId: string | null }
  /** Codex's note to the model that the user interrupted the turn. */
  | { kind: "interrupt"; text: string }
  /** The model's text, in the turn `turnId` names. */
  | { kind: "text"; text: string; turnId: string | null }
  | { kind: "thinking"; text: string }
  /** `id` is the call_id its result names. */
  | { kind: "tool_use"; id: string; name: string; input: unknown }
  | { kind: "tool_result"; id: string; text: string; isError: boolean }
  /** One model response's tokens, once (token_usage_record). */
  | { kind: "usage"; responseId: string; tokens: TokenCounts }
  | {
      kind: "turn_end";
      turnId: string | null;
      how: "completed" | "interrupted" | "api_error";
      error: string | null;
      rateLimited: boolean;
    }
  | { kind: "other" }
);

export function parseRolloutLine(text: string): RolloutEntry | null {
  const line = parseJsonLine(text);
  if (!isObject(line) || !isObject(line.payload)) return null;
  const timestamp = str(line.timestamp);
  const ordinal = typeof line.ordinal === "number" && Number.isFinite(line.ordinal) ? line.ordinal : null;
  const payload = line.payload;
  const entry = (() => {
    switch (line.type) {
      case "session_meta":
        return meta(payload);
      case "turn_context":
        return { kind: "context", model: str(payload.model), cwd: str(payload.cwd) } as const;
      case "response_item":
        return responseItem(payload);
      case "event_msg":
        return event(payload);
      case "token_usage_record":
        return usage(payload);
      default:
        return { kind: "other" } as const;
    }
  })();
  return { timestamp, ordinal, ...entry };
}

function meta(payload: Json) {
  return {
    kind: "meta",
    threadId: str(payload.id) ?? "",
    cwd: str(payload.cwd),
    forkedFrom: str(payload.forked_from_id),
  } as const;
}

/** The text of a message's content blocks (input_text, output_text). */
function contentText(content: unknown): string {
  if (!Array.isArray(content)) return typeof content === "string" ? content : "";
  return content
    .filter((b) => isObject(b) && typeof b.text === "string")
    .map((b) => (b as { text: string }).text)
    .join("\n");
}

function responseItem(payload: Json) {
  const meta = isObject(payload.internal_chat_message_metadata_passthrough)
    ? payload.internal_chat_message_metadata_passthrough
    : {};
  switch (payload.type) {
    case "message": {
      const text = contentText(payload.content);
      if (payload.role === "assistant") return { kind: "text", text, turnId: str(meta.turn_id) } as const;
      if (payload.role !== "user") return { kind: "other" } as const; // developer: instructions
      const kinds = Array.isArray(meta.content_item_kinds) ? meta.content_item_kinds : [];
      if (kinds.includes("generic.turn_aborted")) return { kind: "interrupt", text } as const;
      return isPersonsPrompt(meta, text)
        ? ({ kind: "prompt", text, turnId: str(meta.turn_id) } as const)
        : ({ kind: "other" } as const);
    }
    case "reasoning": {
      const summary = Array.isArray(payload.summary) ? payload.summary : [];
      return { kind: "thinking", text: contentText(summary) } as const;
    }
    case "function_call":
    case "custom_tool_call":
    case "local_shell_call":
      return {
        kind: "tool_use",
        id: str(payload.call_id) ?? "",
        name: str(payload.name) ?? "local_shell",
        input: toolInput(payload),
      } as const;
    case "function_call_output":
    case "custom_tool_call_output": {
      const text = outputText(payload.output);
      return { kind: "tool_result", id: str(payload.call_id) ?? "", text, isError: failed(text) } as const;
    }
    default:
      return { kind: "other" } as const;
  }
}

/**
 * A person's prompt, not the context Codex adds as user messages (`<environment_context>`,
 * AGENTS.md, `<turn_aborted>`): their provenance says so; older lines without it by their form.
 */
function isPersonsPrompt(meta: Json, text: string): boolean {
  const provenance = Array.isArray(meta.content_item_metadata)
    ? (meta.content_item_metadata as Json[]).map((m) => (isObject(m.provenance) ? m.provenance.type : null))
    : [];
  if (provenance.length) return provenance.includes("user");
  const t = text.trimStart();
  return !t.startsWith("# AGENTS.md instructions") && !/^<([a-z_ ]+)>[\s\S]*<\/\1>\s*$/.test(t);
}

/** A function call's arguments (JSON text), a custom tool's input (freeform text) as {input}. */
function toolInput(payload: Json): unknown {
  if (typeof payload.arguments === "string") {
    try {
      return JSON.parse(payload.arguments);
    } catch {
      return { arguments: payload.arguments };
    }
  }
  if (typeof payload.input === "string") return { input: payload.input };
  return payload.action ?? payload.input ?? null;
}

function outputText(output: unknown): string {
  if (typeof output === "string") return output;
  if (isObject(output) && typeof output.content === "string") return output.content;
  return contentText(output);
}

/** "Process exited with code 1" (a command), "Exit code: 1" (a patch), "aborted by user". */
function failed(text: string): boolean {
  const code = text.match(/^(?:Process exited with code|Exit code:) (\d+)$/m)?.[1];
  return (code !== undefined && code !== "0") || /^aborted by user$/m.test(text);
}

function event(payload: Json) {
  const turnId = str(payload.turn_id);
  if (payload.type === "task_started") return { kind: "turn_start", turnId } as const;
  if (payload.type === "turn_aborted")
    return { kind: "turn_end", turnId, how: "interrupted", error: null, rateLimited: false } as const;
  if (payload.type !== "task_complete") return { kind: "other" } as const;
  if (!isObject(payload.error))
    return { kind: "turn_end", turnId, how: "completed", error: null, rateLimited: false } as const;
  const info = JSON.stringify(payload.error.codex_error_info ?? "");
  const error = str(payload.error.message) ?? "api_error";
  const rateLimited = /"http_status_code":429|usage_limit|rate_limit/.test(info) || /\b429\b/.test(error);
  return { kind: "turn_end", turnId, how: "api_error", error, rateLimited } as const;
}

/**
 * Codex's input_tokens is the whole prompt, cached and cache-written tokens included: ag's input
 * is the rest. Its output_tokens includes the reasoning tokens.
 */
function usage(payload: Json) {
  const u = isObject(payload.usage) ? payload.usage : {};
  const cached = num(u.cached_input_tokens);
  const written = num(u.cache_write_input_tokens);
  return {
    kind: "usage",
    responseId: str(payload.response_id) ?? "",
    tokens: {
      input: Math.max(0, num(u.input_tokens) - cached - written),
      output: num(u.output_tokens),
      cacheRead: cached,
      cacheCreation: written,
    },
  } as const;
}
