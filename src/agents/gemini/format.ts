import {
  hasAt,
  type LineReader,
  type MessageRole,
  type TranscriptFormat,
  type TranscriptMessage,
  topLevelString,
  valueAt,
} from "../../transcript/cursor.ts";
import { toolUseFields } from "../messages.ts";
import { partsText, resultsOf } from "./parts.ts";
import {
  CONTEXT_TAG,
  createMessageFilter,
  type GeminiMessage,
  type LineFacts,
  parseSessionLine,
  roleOf,
} from "./session-file.ts";

/**
 * The session file for the cursor index. Its lines rewrite messages (session-file.ts), so the
 * index reads them with `entries`: one entry per message (its tool calls a second one), keyed by
 * the message id, each shown as its newest line; the CLI's copies of its history are no entries.
 * The facts are read from the bytes (the scan decodes nothing), the page's lines parsed.
 */

const encode = (s: string) => new TextEncoder().encode(s);
const KEYS = {
  id: encode("id"),
  type: encode("type"),
  content: encode("content"),
  toolCalls: encode("toolCalls"),
  thoughts: encode("thoughts"),
  set: encode("$set"),
  messages: encode("messages"),
};
const CONTEXT_PARTS = encode(`[{"text":"${CONTEXT_TAG}`);
const decoder = new TextDecoder();
const QUOTE = 0x22;
const OPEN = 0x5b;
const CLOSE = 0x5d;

/** What a line is, from its bytes (session-file.ts `factsOf` reads the same from JSON). */
export function factsOfBytes(line: Uint8Array): LineFacts {
  const reset = valueAt(line, KEYS.set) >= 0 && valueAt(line, KEYS.messages, 2) >= 0;
  const id = topLevelString(line, KEYS.id);
  const type = topLevelString(line, KEYS.type);
  const content = valueAt(line, KEYS.content);
  const nonEmptyList = (key: Uint8Array) => {
    const at = valueAt(line, key);
    return at >= 0 && line[at] === OPEN && line[at + 1] !== CLOSE;
  };
  const toolCalls = nonEmptyList(KEYS.toolCalls);
  const typeText = type ? decoder.decode(type) : null;
  return {
    reset,
    id: id ? decoder.decode(id) : null,
    type: typeText,
    contextCopy: typeText === "user" && content >= 0 && hasAt(line, CONTEXT_PARTS, content),
    parts: content >= 0 && line[content] !== QUOTE,
    toolCalls,
    empty:
      line[content] === QUOTE && line[content + 1] === QUOTE && !toolCalls && !nonEmptyList(KEYS.thoughts),
  };
}

const TYPE_ROLES = new Map<string, MessageRole>(
  ["user", "gemini", "error", "info", "warning"].map((type) => [type, roleOf(type)]),
);

export const geminiTranscriptFormat: TranscriptFormat = {
  classify(line) {
    const type = topLevelString(line, KEYS.type);
    return type && topLevelString(line, KEYS.id) ? (TYPE_ROLES.get(decoder.decode(type)) ?? null) : null;
  },
  entries(): LineReader {
    const filter = createMessageFilter();
    return (line) => filter(factsOfBytes(line));
  },
  toMessage(id, line, role) {
    const parsed = parseSessionLine(line);
    if (parsed.kind !== "message") return { id, role, kind: "other", text: "", timestamp: null, uuid: null };
    return {
      id,
      role,
      timestamp: parsed.message.timestamp,
      uuid: parsed.message.id,
      ...fieldsOf(parsed.message),
    };
  },
};

type Fields = Omit<TranscriptMessage, "id" | "role" | "timestamp" | "uuid">;

function fieldsOf(message: GeminiMessage): Fields {
  const text = typeof message.content === "string" ? message.content : partsText(message.content);
  switch (message.type) {
    case "user": {
      const results = resultsOf(message.content);
      if (results.length === 0) return { kind: "prompt", text };
      const isError = results.some((r) => r.isError);
      return {
        kind: "tool_result",
        text: results.map((r) => r.text).join("\n"),
        toolUseId: results[0]!.id,
        isError,
      };
    }
    case "gemini":
      return {
        ...replyFields(message, text),
        messageId: message.id,
        ...(message.model ? { model: message.model } : {}),
      };
    case "error":
      return { kind: "api_error", text, isError: true };
    case "info":
      // After an interrupt or a refused tool, the CLI notes the turn's end this way.
      return text === "Request cancelled."
        ? { kind: "interrupt", text }
        : { kind: "system", text, subtype: "info" };
    default:
      return { kind: "system", text, subtype: message.type };
  }
}

/** A gemini line: its tool calls once it has them (the entry keyed `<id>:tools`), else its text or thoughts. */
function replyFields(message: GeminiMessage, text: string): Fields {
  const [first, ...more] = message.toolCalls;
  if (first) {
    const inputs = [first, ...more].map((call) => JSON.stringify(call.args));
    return toolUseFields(first.name, first.id, first.args, inputs.join("\n"));
  }
  if (text === "" && message.thoughts.length) return { kind: "thinking", text: message.thoughts.join("\n") };
  return { kind: "text", text };
}
