import type { ToolCategory } from "../agent.ts";

/**
 * OpenCode's built-in tools (1.18) by what they do, for permission policies. Anything else
 * (task, todowrite, question, skill, MCP tools) is "other": no policy flag covers it.
 */
const CATEGORIES: Record<string, ToolCategory> = {
  read: "read",
  glob: "read",
  grep: "read",
  list: "read",
  webfetch: "read",
  websearch: "read",
  codesearch: "read",
  lsp: "read",
  write: "write",
  edit: "write",
  patch: "write",
  multiedit: "write",
  apply_patch: "write",
  bash: "bash",
};

export function toolCategory(name: string): ToolCategory {
  return CATEGORIES[name] ?? "other";
}

/** The hook that can refuse a tool: the plugin throws the reason, which OpenCode gives the model. */
export const POLICY_EVENT = "tool.execute.before";

export function denyReply(event: string, reason: string): Record<string, unknown> | null {
  return event === POLICY_EVENT ? { decision: "deny", reason } : null;
}
