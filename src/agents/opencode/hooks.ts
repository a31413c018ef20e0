import type { AgentObservation, HookReading, PermissionRequest } from "../agent.ts";
import { namedFiles, type Payload, promptSubmitted, text, toolCall } from "../hook-reading.ts";
import { questionRequest } from "../questions.ts";

/**
 * What ag's plugin (plugin.js) forwards of OpenCode's plugin hooks and bus events, and what each
 * means for the state. The payload is OpenCode's own (the hook's input, or the event's
 * properties) with the plugin's additions: `transcriptPath` (the conversation file), `parentID`
 * (a sub-agent's session), `toolName` (the tool a dialog is about) and, for `chat.message`, the
 * prompt's `text`.
 */
export const HOOK_EVENTS: readonly string[] = [
  "chat.message",
  "tool.execute.before",
  "tool.execute.after",
  "permission.asked",
  "permission.replied",
  "question.asked",
  "question.replied",
  "question.rejected",
  "session.status",
  "session.idle",
  "session.error",
];

export function readHook(event: string, payload: Payload): HookReading {
  const sidechain = text(payload.parentID) !== "";
  const conversationId = sidechain ? "" : text(payload.sessionID);
  const transcriptPath = text(payload.transcriptPath);
  return {
    observation: observationOf(event, payload, sidechain),
    ...namedFiles(conversationId, transcriptPath),
  };
}

function observationOf(event: string, payload: Payload, sidechain: boolean): AgentObservation | null {
  // A sub-agent's dialogs show in the session's UI; the rest of its life is the turn's activity.
  if (event === "permission.asked") return { kind: "permission", request: permissionRequest(payload) };
  if (event === "question.asked")
    return { kind: "permission", request: questionRequest(payload, "question") };
  if (sidechain) return { kind: "activity" };
  const tool = text(payload.tool) || text(payload.toolName);
  const toolUseId = text(payload.callID);
  switch (event) {
    case "chat.message":
      return promptSubmitted(text(payload.text), text(payload.messageID));
    case "tool.execute.before":
      return toolCall("started", tool, toolUseId);
    case "tool.execute.after":
      return toolCall("finished", tool, toolUseId);
    case "permission.replied":
    case "question.replied":
      // Answered in OpenCode's own UI or by ag: its tool goes on. A refusal ends the turn, which
      // session.idle says.
      return payload.reply === "reject" ? null : toolCall("started", tool, toolUseId);
    case "session.status":
      return { kind: "activity" };
    case "session.idle":
      return { kind: "turn-ended" };
    case "session.error":
      return failure(payload.error);
    default:
      // question.rejected: the turn ends, as session.idle says next.
      return null;
  }
}

/** An error that ends the turn; an interrupt (MessageAbortedError) is not one. */
function failure(value: unknown): AgentObservation | null {
  const error = (value ?? {}) as { name?: unknown; data?: { message?: unknown; statusCode?: unknown } };
  const name = text(error.name);
  if (!name || name === "MessageAbortedError") return null;
  const message = text(error.data?.message) || name;
  const rateLimited = error.data?.statusCode === 429 || /rate limit/i.test(message);
  return { kind: "turn-failed", error: message, rateLimited };
}

/** A tool permission: the command, the file, else the patterns it is asked for. */
function permissionRequest(payload: Payload): PermissionRequest {
  const metadata = (payload.metadata ?? {}) as Payload;
  const patterns = Array.isArray(payload.patterns)
    ? payload.patterns.filter((p) => typeof p === "string")
    : [];
  const detail =
    text(metadata.command) ||
    text(metadata.filepath) ||
    patterns.join(" ") ||
    text(payload.permission) ||
    "a tool";
  return { kind: "tool", tool: text(payload.toolName) || text(payload.permission) || "tool", detail };
}
