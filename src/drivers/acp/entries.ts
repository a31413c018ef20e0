import type { TokenCounts } from "../../agents/vocabulary.ts";

/**
 * The transcript ag keeps of an ACP session: one JSON line per entry, appended, never rewritten
 * (so a cursor id, the entry's ordinal among message lines, never changes). ACP streams a
 * conversation as `session/update` notifications; the agent keeps its own copy in its own
 * format, which ag does not read.
 */
export type AcpEntry =
  | { type: "user"; at: string; text: string }
  | { type: "assistant"; at: string; text: string }
  | { type: "thinking"; at: string; text: string }
  | { type: "tool_use"; at: string; toolUseId: string; toolName: string; input: unknown }
  | { type: "tool_result"; at: string; toolUseId: string; text: string; isError: boolean }
  | { type: "plan"; at: string; text: string }
  /** The end of a turn: the `session/prompt` response's stopReason. */
  | { type: "turn_end"; at: string; stopReason: string }
  /**
   * Tokens a turn used, where the agent reports them (not a message: the cursor skips it). `id`:
   * unique across sessions (the metrics ledger counts each usage once by it; older files lack it).
   */
  | { type: "usage"; at: string; id?: string; turn: number; model: string | null; tokens: TokenCounts }
  /** ag reopened the conversation after a restart (session/load). */
  | { type: "reopened"; at: string; text: string };

/** Which entries are messages for the cursor, and whose. */
export const ENTRY_ROLES: Record<AcpEntry["type"], "user" | "assistant" | "system" | null> = {
  user: "user",
  assistant: "assistant",
  thinking: "assistant",
  tool_use: "assistant",
  tool_result: "user",
  plan: "assistant",
  turn_end: "system",
  reopened: "system",
  usage: null,
};
