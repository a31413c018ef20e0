import type { AgentObservation, HookReading } from "./agent.ts";

/**
 * The pieces every agent's hook reader builds its reading from: the payload's text fields, the
 * conversation and file a payload names, and the observations whose shape is the same whatever
 * the agent (a prompt taken, a tool call's start and end, the session's end).
 */

/** A hook's payload as the agent sent it: JSON whose fields are checked where read. */
export type Payload = Record<string, unknown>;

/** A payload field that should be text: the text, else "". */
export const text = (value: unknown): string => (typeof value === "string" ? value : "");

/** The conversation and transcript file a hook names, each left out when empty. */
export function namedFiles(
  conversationId: string,
  transcriptPath: string,
): Pick<HookReading, "conversationId" | "transcriptPath"> {
  return {
    ...(conversationId ? { conversationId } : {}),
    ...(transcriptPath ? { transcriptPath } : {}),
  };
}

/** A prompt was taken; `promptId` when the agent names it. */
export function promptSubmitted(prompt: string, promptId = ""): AgentObservation {
  return { kind: "prompt-submitted", text: prompt, promptId: promptId || undefined };
}

/** A tool call started or finished; `toolUseId` when the agent names it. */
export function toolCall(phase: "started" | "finished", tool: string, toolUseId = ""): AgentObservation {
  return { kind: "tool", phase, tool, toolUseId: toolUseId || undefined };
}

/** The agent ended its session: the reason it gives, else "exit". */
export function sessionEnded(reason: string): AgentObservation {
  return { kind: "session-ended", reason: reason || "exit" };
}
