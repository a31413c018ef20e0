import { Database } from "bun:sqlite";
import { existsSync } from "node:fs";
import { join } from "node:path";
import type { TranscriptMessage } from "../../transcript/cursor.ts";
import type { HistoryConversation } from "../history.ts";
import { isObject, type Json, parseJsonLine, str } from "../json-fields.ts";
import { toolUseFields } from "../messages.ts";

/**
 * OpenCode's own store (1.18.33): one SQLite database for every conversation of the user,
 * `~/.local/share/opencode/opencode.db` — a `session` row each (its folder, title, parent for a
 * sub-agent's), its `message` rows (role in `data`) and their `part` rows (`data.type`: text,
 * reasoning, tool, step-start, step-finish …), ids ascending in time. Read only: opened with
 * SQLite's read-only flag, never written, never locked for writing.
 */
export function openCodeDatabase(home: string): string {
  return join(home, ".local", "share", "opencode", "opencode.db");
}

interface SessionRow {
  id: string;
  directory: string;
  title: string;
  updated: number;
}

interface PartRow {
  message: string;
  role: string;
  created: number;
  data: string;
}

/** Every main conversation in the database (a sub-agent's is part of its parent's run). */
export async function openCodeHistory(path: string): Promise<HistoryConversation[]> {
  if (!existsSync(path)) return [];
  const db = new Database(path, { readonly: true });
  try {
    const rows = db
      .query<SessionRow, []>(
        `SELECT id, directory, title, time_updated AS updated FROM session
         WHERE parent_id IS NULL ORDER BY id`,
      )
      .all();
    return rows.map((row) => ({
      path,
      conversationId: row.id,
      workDir: row.directory || null,
      stored: { stamp: row.updated, messages: () => conversationMessages(path, row.id) },
    }));
  } finally {
    db.close();
  }
}

/** One conversation's messages as the cursor would page them: a prompt, texts, tool calls and results. */
export function conversationMessages(path: string, conversationId: string): TranscriptMessage[] {
  const db = new Database(path, { readonly: true });
  try {
    const parts = db
      .query<PartRow, [string]>(
        `SELECT p.message_id AS message, json_extract(m.data, '$.role') AS role,
                p.time_created AS created, p.data AS data
         FROM part p JOIN message m ON m.id = p.message_id
         WHERE p.session_id = ? ORDER BY p.message_id, p.id`,
      )
      .all(conversationId);
    const messages: TranscriptMessage[] = [];
    for (const part of parts) {
      for (const message of messagesOf(part)) messages.push({ ...message, id: messages.length + 1 });
    }
    return messages;
  } finally {
    db.close();
  }
}

type Unnumbered = Omit<TranscriptMessage, "id">;

/** What one part is to the cursor: nothing (steps, snapshots, patches), one message, or a tool's two. */
function messagesOf(part: PartRow): Unnumbered[] {
  const data = parseJsonLine(part.data);
  if (!isObject(data)) return [];
  const base = {
    timestamp: new Date(part.created).toISOString(),
    uuid: str(data.id) ?? null,
    messageId: part.message,
  };
  const user = part.role === "user";
  switch (data.type) {
    case "text": {
      const text = str(data.text) ?? "";
      if (!text.trim() || data.synthetic === true) return [];
      return [
        user
          ? { ...base, role: "user", kind: "prompt", text }
          : { ...base, role: "assistant", kind: "text", text },
      ];
    }
    case "reasoning":
      return [{ ...base, role: "assistant", kind: "thinking", text: str(data.text) ?? "" }];
    case "tool":
      return toolMessages(base, data);
    default:
      return [];
  }
}

function toolMessages(base: Pick<Unnumbered, "timestamp" | "uuid" | "messageId">, data: Json): Unnumbered[] {
  const tool = str(data.tool) ?? "";
  const callID = str(data.callID) ?? "";
  const state: Json = isObject(data.state) ? data.state : {};
  const call: Unnumbered = { ...base, role: "assistant", ...toolUseFields(tool, callID, state.input) };
  if (state.status !== "completed" && state.status !== "error") return [call];
  const failed = state.status === "error";
  const result: Unnumbered = {
    ...base,
    role: "user",
    kind: "tool_result",
    text: str(failed ? state.error : state.output) ?? "",
    toolName: tool,
    toolUseId: callID,
    isError: failed,
  };
  return [call, result];
}
