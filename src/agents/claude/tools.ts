import type { ToolCategory } from "../agent.ts";

/**
 * Claude Code's built-in tools by what they do, for permission policies. Anything else (MCP
 * tools, sub-agents, to-do lists) is "other": no policy flag covers it, so ag does not refuse it.
 */
const CATEGORIES: Record<string, ToolCategory> = {
  Read: "read",
  Glob: "read",
  Grep: "read",
  LS: "read",
  NotebookRead: "read",
  WebFetch: "read",
  WebSearch: "read",
  Write: "write",
  Edit: "write",
  MultiEdit: "write",
  NotebookEdit: "write",
  Bash: "bash",
  BashOutput: "bash",
  KillShell: "bash",
  KillBash: "bash",
};

export function toolCategory(name: string): ToolCategory {
  return CATEGORIES[name] ?? "other";
}

/** The documented refusals: PreToolUse prevents the call; PermissionRequest answers its dialog. */
export function denyReply(event: string, reason: string): Record<string, unknown> | null {
  if (event === "PreToolUse") {
    return {
      hookSpecificOutput: {
        hookEventName: "PreToolUse",
        permissionDecision: "deny",
        permissionDecisionReason: reason,
      },
    };
  }
  if (event === "PermissionRequest") {
    return {
      hookSpecificOutput: {
        hookEventName: "PermissionRequest",
        decision: { behavior: "deny", message: reason },
      },
    };
  }
  return null;
}
