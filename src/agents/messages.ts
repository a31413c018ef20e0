import type { EventInput } from "../events/bus.ts";
import { clip, clipStrings } from "./clip.ts";

/**
 * A transcript's tool calls and their results as `message.*` events, the same from every agent's
 * reader: the tool's input and the result's text clipped (the transcript keeps them whole).
 */

/** Where a message stands: its id, time and whether a sub-agent wrote it. */
export type MessageMeta = EventInput<"message.user">["meta"];

export function toolUseMessage(
  meta: MessageMeta,
  tool: string,
  toolUseId: string,
  input: unknown,
): EventInput<"message.tool_use"> {
  return {
    event: "message.tool_use",
    detail: tool,
    meta: { ...meta, tool, toolUseId, input: clipStrings(input) },
  };
}

export function toolResultMessage(
  meta: MessageMeta,
  toolUseId: string,
  text: string,
  isError: boolean,
): EventInput<"message.tool_result"> {
  return { event: "message.tool_result", detail: clip(text), meta: { ...meta, toolUseId, isError } };
}

/**
 * A tool call as a transcript page shows it (GET /v1/sessions/:id/transcript/cursor): the tool,
 * its id and input; the text is the input as JSON unless the line says more (several calls).
 */
export function toolUseFields(
  tool: string,
  toolUseId: string,
  input: unknown,
  text = JSON.stringify(input ?? null),
) {
  return { kind: "tool_use" as const, text, toolName: tool, toolUseId, toolInput: input };
}
