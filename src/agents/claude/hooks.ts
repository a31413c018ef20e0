import type { Observation } from "../../sessions/observation.ts";

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
  hookBaseUrl: string;
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
      url: `${options.hookBaseUrl.replace(/\/+$/, "")}/v1/hooks/${event}`,
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

type Payload = Record<string, unknown>;

const text = (value: unknown): string => (typeof value === "string" ? value : "");

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

function questionText(input: unknown): string {
  const questions = (input as { questions?: Array<{ question?: string }> } | undefined)?.questions;
  return text(questions?.[0]?.question) || "the agent asks a question";
}

function planText(input: unknown): string {
  const plan = text((input as Payload | undefined)?.plan);
  return (
    plan
      .split("\n")
      .find((l) => l.trim())
      ?.trim() ?? "the agent proposes a plan"
  );
}

export function readHookPayload(event: string, payload: Payload): Observation | null {
  const tool = text(payload.tool_name);
  switch (event) {
    case "UserPromptSubmit":
      return {
        kind: "prompt-submitted",
        text: text(payload.prompt),
        promptId: text(payload.prompt_id) || undefined,
      };
    case "PreToolUse":
    case "PostToolUse":
    case "PostToolUseFailure":
    case "SubagentStop":
      return { kind: "activity", working: true };
    case "PermissionRequest":
      if (tool === "AskUserQuestion")
        return {
          kind: "permission",
          request: { kind: "question", detail: questionText(payload.tool_input) },
        };
      if (tool === "ExitPlanMode")
        return { kind: "permission", request: { kind: "plan", detail: planText(payload.tool_input) } };
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
      return { kind: "session-ended", reason: text(payload.reason) || "exit" };
    default:
      // SessionStart, Notification: facts about the session, not about its state.
      return null;
  }
}
