import type * as acp from "@agentclientprotocol/sdk";
import { taskListOf } from "../agents/index.ts";
import type { TranscriptMessage } from "../transcript/cursor.ts";
import type { AgApi, CursorPage } from "./port.ts";

/**
 * A session's transcript as ACP `session/update`s: what `session/load` replays and what a live
 * turn streams. The transcript (ag's cursor) holds every entry whole; events only say that there
 * is more to read. Pure apart from `readAfter`.
 */

const PAGE = 200;

/**
 * The entries after `afterId`, oldest first: pages backwards from the newest until it reaches
 * `afterId` (a history of any length, no entry twice).
 */
export async function readAfter(
  api: AgApi,
  sessionId: string,
  afterId: number,
): Promise<TranscriptMessage[]> {
  const found: TranscriptMessage[] = [];
  let before: number | undefined;
  for (;;) {
    const query = `limit=${PAGE}${before === undefined ? "" : `&before_id=${before}`}`;
    const page = await api.get<CursorPage>(`/v1/sessions/${sessionId}/transcript/cursor?${query}`);
    const fresh = page.messages.filter((m) => m.id > afterId);
    found.unshift(...fresh);
    if (!page.has_more || page.messages.length === 0 || page.oldest_id <= afterId + 1) return found;
    before = page.oldest_id;
  }
}

const text = (value: string): acp.ContentBlock => ({ type: "text", text: value });

/** ACP's kind of a tool, from its name as the agent calls it. */
export function toolKind(name: string | undefined): acp.ToolKind {
  const n = (name ?? "").toLowerCase();
  if (/^(read|view|read_file|readfile|notebookread)$/.test(n)) return "read";
  if (/edit|write|patch|replace/.test(n)) return "edit";
  if (/delete|remove/.test(n)) return "delete";
  if (/move|rename/.test(n)) return "move";
  if (/grep|glob|search|find|list|ls/.test(n)) return "search";
  if (/bash|shell|exec|command|terminal/.test(n)) return "execute";
  if (/fetch|web|http/.test(n)) return "fetch";
  if (/think/.test(n)) return "think";
  return "other";
}

/** What a tool call's title names besides the tool: its file, command, pattern or address. */
function subject(input: unknown): string | null {
  if (!input || typeof input !== "object") return null;
  const fields = input as Record<string, unknown>;
  for (const key of ["file_path", "path", "command", "pattern", "url", "query", "title"]) {
    const value = fields[key];
    if (typeof value === "string" && value.trim()) return value.trim().split("\n")[0]!.slice(0, 200);
  }
  return null;
}

export function toolTitle(name: string | undefined, input: unknown): string {
  const about = subject(input);
  return about ? `${name ?? "tool"} ${about}` : (name ?? "tool");
}

/** A tool call that hands in the agent's task list (Claude Code's to-do list) is ACP's plan. */
function planOf(message: TranscriptMessage): acp.PlanEntry[] | null {
  const items = taskListOf(message.toolName, message.toolInput);
  return items ? items.map((item) => ({ ...item, priority: "medium" as const })) : null;
}

/** The id an editor knows a tool call by: the agent's own, else one made of the entry's. */
export const toolCallIdOf = (message: TranscriptMessage) => message.toolUseId ?? `ag-entry-${message.id}`;

/**
 * One transcript entry as the updates it makes. `echoUser: false` leaves a person's prompt out
 * (the editor sent it, and shows it already).
 */
export function toUpdates(message: TranscriptMessage, options: { echoUser: boolean }): acp.SessionUpdate[] {
  switch (message.kind) {
    case "prompt":
      return options.echoUser && message.text
        ? [{ sessionUpdate: "user_message_chunk", content: text(message.text) }]
        : [];
    case "text":
      return message.role === "assistant" && message.text
        ? [{ sessionUpdate: "agent_message_chunk", content: text(message.text) }]
        : [];
    case "thinking":
      return message.text ? [{ sessionUpdate: "agent_thought_chunk", content: text(message.text) }] : [];
    case "tool_use": {
      const plan = planOf(message);
      if (plan) return [{ sessionUpdate: "plan", entries: plan }];
      return [
        {
          sessionUpdate: "tool_call",
          toolCallId: toolCallIdOf(message),
          title: toolTitle(message.toolName, message.toolInput),
          kind: toolKind(message.toolName),
          status: "in_progress",
          rawInput: message.toolInput ?? message.text,
        },
      ];
    }
    case "tool_result":
      return message.toolUseId
        ? [
            {
              sessionUpdate: "tool_call_update",
              toolCallId: message.toolUseId,
              status: message.isError ? "failed" : "completed",
              content: message.text ? [{ type: "content", content: text(message.text) }] : [],
            },
          ]
        : [];
    default:
      return [];
  }
}
