import type { ToolCategory } from "../agent.ts";

/**
 * The Gemini CLI's built-in tools (0.61.0) by what they do, for permission policies. Anything
 * else (MCP tools, sub-agents, ask_user, plan mode, to-do lists) is "other": no policy flag covers
 * it, so ag does not refuse it.
 */
const CATEGORIES: Record<string, ToolCategory> = {
  read_file: "read",
  list_directory: "read",
  glob: "read",
  grep_search: "read",
  web_fetch: "read",
  google_web_search: "read",
  write_file: "write",
  replace: "write",
  run_shell_command: "bash",
  list_background_processes: "bash",
  read_background_output: "bash",
};

/** The tools that write a file (its `file_path`). */
export const WRITING_TOOLS = new Set(["write_file", "replace"]);

export function toolCategory(name: string): ToolCategory {
  return CATEGORIES[name] ?? "other";
}

/**
 * BeforeTool's refusal (hooks reference: `decision: "deny"` blocks the call, the reason goes to
 * the model as "Tool execution blocked: <reason>" and no dialog shows). It cannot allow: a dialog
 * still asks when ag gives no decision.
 */
export function denyReply(event: string, reason: string): Record<string, unknown> | null {
  return event === "BeforeTool" ? { decision: "deny", reason } : null;
}

/** The tool a dialog's title names ("Shell", "WriteFile", "Edit"), as the hooks name it. */
const DISPLAY_NAMES: Record<string, string> = {
  Shell: "run_shell_command",
  WriteFile: "write_file",
  Edit: "replace",
  WebFetch: "web_fetch",
};

export function toolOfTitle(title: string): string {
  return DISPLAY_NAMES[title] ?? title;
}
