import type { AgentObservation, HookReading, PermissionRequest, ToolCategory } from "../agent.ts";
import { namedFiles, type Payload, promptSubmitted, sessionEnded, text, toolCall } from "../hook-reading.ts";
import { questionRequest } from "../questions.ts";

/**
 * Claude Code's hooks: which ones ag registers, and what each payload means for the state.
 * Payload shapes: the harness README ("Hooks") and Claude Code's hook documentation.
 */

/** Registered as `type: "http"` hooks. */
export const HTTP_HOOK_EVENTS = [
  "UserPromptSubmit",
  "PreToolUse",
  "PostToolUse",
  "PostToolUseFailure",
  "PermissionRequest",
  "Notification",
  "Stop",
  "StopFailure",
  "SubagentStop",
  "SessionEnd",
] as const;

/** Claude Code runs only `command` hooks for these ("HTTP hooks are not supported for SessionStart"). */
export const COMMAND_HOOK_EVENTS = ["SessionStart"] as const;

export const HOOK_EVENTS: readonly string[] = [...HTTP_HOOK_EVENTS, ...COMMAND_HOOK_EVENTS];

const TOOL_EVENTS = new Set(["PreToolUse", "PostToolUse", "PostToolUseFailure", "PermissionRequest"]);

export interface HookSettingsOptions {
  /** This agent's hook route (`…/v1/hooks/claude`): each event is a path below it. */
  hookUrl: string;
  secretHeader: string;
  secret: string;
  /** The argv that runs `ag hook` (the binary itself), for the command-only events. */
  forwarderCommand: (event: string) => string;
  timeoutSeconds?: number;
}

/** The `hooks` block of the per-session settings file passed with `--settings`. */
export function hookSettings(options: HookSettingsOptions): Record<string, unknown> {
  const timeout = options.timeoutSeconds ?? 10;
  const hooks: Record<string, unknown> = {};
  for (const event of HTTP_HOOK_EVENTS) {
    const hook = {
      type: "http",
      url: `${options.hookUrl.replace(/\/+$/, "")}/${event}`,
      headers: { [options.secretHeader]: options.secret },
      timeout,
    };
    hooks[event] = [TOOL_EVENTS.has(event) ? { matcher: "*", hooks: [hook] } : { hooks: [hook] }];
  }
  for (const event of COMMAND_HOOK_EVENTS) {
    hooks[event] = [{ hooks: [{ type: "command", command: options.forwarderCommand(event), timeout }] }];
  }
  return hooks;
}

/** What a tool call is about, in one line: the command, the file, else its input. */
export function describeToolInput(tool: string, input: unknown): string {
  const fields = (input ?? {}) as Payload;
  if (tool === "Bash") return text(fields.command);
  for (const key of ["file_path", "notebook_path", "path", "url", "pattern"]) {
    if (typeof fields[key] === "string") return fields[key] as string;
  }
  const json = JSON.stringify(input ?? {});
  return json.length > 200 ? `${json.slice(0, 197)}...` : json;
}

/** The plan a dialog asks to approve: its first line as the detail, the whole of it (cut) besides. */
const MAX_PLAN_CHARS = 20_000;
function planRequest(input: unknown): PermissionRequest {
  const plan = text((input as Payload | undefined)?.plan);
  const first = plan
    .split("\n")
    .find((l) => l.trim())
    ?.trim();
  return {
    kind: "plan",
    tool: "ExitPlanMode",
    detail: first ?? "the agent proposes a plan",
    ...(plan.trim()
      ? { plan: plan.length > MAX_PLAN_CHARS ? `${plan.slice(0, MAX_PLAN_CHARS)}…` : plan }
      : {}),
  };
}

/** One hook callback: its conversation, its transcript file and what it means for the state. */
export function readHook(event: string, payload: Payload): HookReading {
  return { observation: hookObservation(event, payload), ...hookEnvelope(payload) };
}

/**
 * What every hook payload in Claude Code's format names besides its event: the conversation and
 * its file. (Codex CLI's hooks use the same format.)
 */
export function hookEnvelope(payload: Payload): Pick<HookReading, "conversationId" | "transcriptPath"> {
  return namedFiles(text(payload.session_id), text(payload.transcript_path));
}

/** The tool a pre-tool or permission hook is about, in this format, and its kind. */
export function hookTool(
  event: string,
  payload: Payload,
  category: (name: string) => ToolCategory,
): { name: string; category: ToolCategory } | null {
  if (event !== "PreToolUse" && event !== "PermissionRequest") return null;
  const name = text(payload.tool_name);
  return name ? { name, category: category(name) } : null;
}

/** What a hook in Claude Code's format means for the state (Codex's hooks build on it). */
export function hookObservation(event: string, payload: Payload): AgentObservation | null {
  const tool = text(payload.tool_name);
  const toolUseId = text(payload.tool_use_id);
  switch (event) {
    case "UserPromptSubmit":
      return promptSubmitted(text(payload.prompt), text(payload.prompt_id));
    case "PreToolUse":
      return toolCall("started", tool, toolUseId);
    case "PostToolUse":
    case "PostToolUseFailure":
      return toolCall("finished", tool, toolUseId);
    case "SubagentStop":
      return { kind: "activity" };
    case "Notification":
      // "Claude needs your permission" (~6 s into a dialog); "Claude is waiting for your input"
      // (60 s idle). Anything else says nothing about the state.
      if (payload.notification_type === "permission_prompt") return { kind: "dialog-waiting" };
      if (payload.notification_type === "idle_prompt") return { kind: "waiting-for-input" };
      return null;
    case "PermissionRequest":
      if (tool === "AskUserQuestion")
        return { kind: "permission", request: questionRequest(payload.tool_input, "AskUserQuestion") };
      if (tool === "ExitPlanMode") return { kind: "permission", request: planRequest(payload.tool_input) };
      return {
        kind: "permission",
        request: { kind: "tool", tool, detail: describeToolInput(tool, payload.tool_input) },
      };
    case "Stop":
      return { kind: "turn-ended" };
    case "StopFailure": {
      const error = text(payload.error) || "api_error";
      return { kind: "turn-failed", error, rateLimited: error === "rate_limit" };
    }
    case "SessionEnd":
      return sessionEnded(text(payload.reason));
    default:
      // SessionStart: a fact about the session, not about its state.
      return null;
  }
}
