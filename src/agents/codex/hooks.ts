import { isAbsolute, join } from "node:path";
import type { AgentObservation, HookReading, ToolCategory } from "../agent.ts";
import { hookEnvelope, hookObservation } from "../claude/hooks.ts";
import { denyReply as claudeDenyReply } from "../claude/tools.ts";
import { type Payload, promptSubmitted, text } from "../hook-reading.ts";

/**
 * Codex CLI's hooks (0.169.0 and 0.171.0 alike): Claude Code's events and payload shapes, run as
 * commands only (the payload on stdin, the decision on stdout). ag registers each as
 * `ag hook <event>`, the forwarder, through `-c hooks.<Event>=[…]` on the command line
 * (docs/agents.md).
 */

export const HOOK_EVENTS = [
  "SessionStart",
  "UserPromptSubmit",
  "PreToolUse",
  "PermissionRequest",
  "PostToolUse",
  "Stop",
  "Interrupt",
  "SessionEnd",
] as const;

const TOOL_EVENTS = new Set<string>(["PreToolUse", "PermissionRequest", "PostToolUse"]);
/** Codex allows these at most 3 s (it clamps a longer timeout and warns about it on screen). */
const SHORT_EVENTS = new Set<string>(["Interrupt", "SessionEnd"]);
const TIMEOUT_S = 10;

/**
 * The `-c` overrides that register the hooks: `hooks.<Event>=[{…}]` as TOML, a config layer of
 * their own: the user's hooks (config.toml's [hooks], hooks.json) still run beside them.
 * `events`: all of them, but for a session whose approvals go to Codex's automatic reviewer: its
 * approval hook fires for every request the reviewer then decides, with nothing on screen.
 */
export function hookOverrides(
  command: (event: string) => string,
  events: readonly string[] = HOOK_EVENTS,
): string[] {
  return events.flatMap((event) => {
    const timeout = SHORT_EVENTS.has(event) ? 3 : TIMEOUT_S;
    const hook = `{type="command",command=${tomlString(command(event))},timeout=${timeout}}`;
    const matcher = TOOL_EVENTS.has(event) ? `matcher="*",` : "";
    return ["-c", `hooks.${event}=[{${matcher}hooks=[${hook}]}]`];
  });
}

/** A TOML basic string: JSON's string escapes are TOML's. */
export function tomlString(text: string): string {
  return JSON.stringify(text);
}

/** One hook callback: its conversation (Codex's thread id), its rollout file and its meaning. */
export function readHook(event: string, payload: Payload): HookReading {
  return { observation: observationOf(event, payload), ...hookEnvelope(payload) };
}

/**
 * Codex's hooks are Claude Code's events in Claude Code's format: what differs is read here (its
 * prompt named by the turn, its permission detail, its Interrupt), the rest as Claude Code's.
 */
function observationOf(event: string, payload: Payload): AgentObservation | null {
  switch (event) {
    case "UserPromptSubmit":
      return promptSubmitted(text(payload.prompt), text(payload.turn_id));
    case "PermissionRequest": {
      const tool = text(payload.tool_name);
      const detail = describeToolInput(tool, payload.tool_input, text(payload.cwd));
      return { kind: "permission", request: { kind: "tool", tool, detail } };
    }
    // An interrupt (Esc, or a refused approval, which interrupts the turn) ends the turn too.
    case "Interrupt":
      return { kind: "turn-ended" };
    default:
      // PreToolUse, PostToolUse, Stop, SessionEnd; SessionStart (a fact about the session, its
      // rollout file, not about its state) is nothing.
      return hookObservation(event, payload);
  }
}

/** What a tool call is about, in one line: the command, the file a patch touches first, else its input. */
export function describeToolInput(tool: string, input: unknown, cwd = ""): string {
  const fields = (input ?? {}) as Payload;
  if (tool === "Bash") return text(fields.command);
  if (tool === "apply_patch") {
    const file = patchFiles(text(fields.command))[0];
    if (file) return isAbsolute(file) || !cwd ? file : join(cwd, file);
  }
  const json = JSON.stringify(input ?? {});
  return json.length > 200 ? `${json.slice(0, 197)}...` : json;
}

/** The files an apply_patch patch adds, updates or deletes, in order. */
export function patchFiles(patch: string): string[] {
  return [...patch.matchAll(/^\*\*\* (?:Add|Update|Delete) File: (.+)$/gm)].map((m) => m[1]!.trim());
}

/** Codex's tools by what they do, for permission policies; anything else (MCP, plans) is "other". */
const CATEGORIES: Record<string, ToolCategory> = {
  Bash: "bash",
  apply_patch: "write",
  view_image: "read",
};

export function toolCategory(name: string): ToolCategory {
  return CATEGORIES[name] ?? "other";
}

/**
 * The refusal Codex takes (0.169.0, 0.171.0): PreToolUse's `permissionDecision: "deny"` blocks
 * the call and tells the model the reason. The approval hook would come after a call the policy already
 * let through, so only the pre-tool hook refuses.
 */
export function denyReply(event: string, reason: string): Record<string, unknown> | null {
  return event === "PreToolUse" ? claudeDenyReply(event, reason) : null;
}
