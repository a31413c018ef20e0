import { join } from "node:path";
import type { AgentObservation, HookReading } from "../agent.ts";
import { namedFiles, type Payload, promptSubmitted, sessionEnded, text, toolCall } from "../hook-reading.ts";
import { questionRequest } from "../questions.ts";

/**
 * The Gemini CLI's hooks (0.61.0): command hooks only, each given its payload as JSON on stdin
 * (`session_id`, `transcript_path`, `cwd`, `hook_event_name` + the event's fields), answered with
 * JSON on stdout. ag registers `ag hook <event>`, which forwards the payload and prints ag's reply.
 *
 * Not registered: SessionStart (it tells nothing ag does not know, and the UI waits for it: a
 * resumed session redraws itself once its hooks are done, dropping what was typed meanwhile),
 * PreCompress (it fires before every model request), BeforeModel/AfterModel/BeforeToolSelection
 * (a process per streamed chunk). No hook says a turn was refused or cut short by a tool
 * interrupt: AfterAgent does not fire then (the screen and the keys end them).
 */
export const HOOK_EVENTS = [
  "BeforeAgent",
  "BeforeTool",
  "AfterTool",
  "Notification",
  "AfterAgent",
  "SessionEnd",
] as const;

const TOOL_EVENTS = new Set(["BeforeTool", "AfterTool"]);

/** The name the CLI shows while ag's hooks run ("Executing Hooks: ag"). */
export const HOOK_NAME = "ag";

/** The `hooks` block of a settings file: each event runs `command(event)`. */
export function hookSettings(command: (event: string) => string, timeoutMs = 10_000) {
  const hooks: Record<string, unknown[]> = {};
  for (const event of HOOK_EVENTS) {
    const hook = { type: "command", name: HOOK_NAME, command: command(event), timeout: timeoutMs };
    // "*" matches every tool; the other events take no matcher.
    hooks[event] = [TOOL_EVENTS.has(event) ? { matcher: "*", hooks: [hook] } : { hooks: [hook] }];
  }
  return hooks;
}

const isObject = (v: unknown): v is Payload => typeof v === "object" && v !== null && !Array.isArray(v);

/**
 * `userDir`: the user's own .gemini folder. The CLI names its file under the launch's
 * GEMINI_CLI_HOME, whose tmp/ links to the user's: ag records the file where it really is, the same
 * path for every launch of the conversation (and the one `transcript.find` gives).
 */
export function readHook(event: string, payload: Payload, userDir?: string): HookReading {
  const conversationId = text(payload.session_id);
  const named = text(payload.transcript_path);
  const at = named.lastIndexOf("/.gemini/tmp/");
  const transcriptPath = userDir && at >= 0 ? join(userDir, named.slice(at + "/.gemini/".length)) : named;
  return { observation: observationOf(event, payload), ...namedFiles(conversationId, transcriptPath) };
}

function observationOf(event: string, payload: Payload): AgentObservation | null {
  const tool = text(payload.tool_name);
  switch (event) {
    case "BeforeAgent":
      return promptSubmitted(text(payload.prompt));
    case "BeforeTool":
      // ask_user's dialog comes next; only this payload has its questions (its notification not).
      if (tool === "ask_user")
        return { kind: "permission", request: questionRequest(payload.tool_input, "ask_user") };
      return toolCall("started", tool);
    case "AfterTool":
      return toolCall("finished", tool);
    case "Notification":
      return notification(payload);
    case "AfterAgent":
      // Also after an API error and an Escape while the reply streamed (prompt_response
      // "[no response text]"): the turn is over either way.
      return { kind: "turn-ended" };
    case "SessionEnd":
      return sessionEnded(text(payload.reason));
    default:
      return null;
  }
}

/**
 * `ToolPermission`: a dialog is on screen, `details.type` says which: exec (a shell command),
 * edit (a file write), ask_user (its questions came with BeforeTool), exit_plan_mode (a plan),
 * info / mcp (others).
 */
function notification(payload: Payload): AgentObservation | null {
  if (payload.notification_type !== "ToolPermission") return null;
  const details = isObject(payload.details) ? payload.details : {};
  switch (details.type) {
    case "ask_user":
      return { kind: "dialog-waiting" };
    case "exit_plan_mode":
      return {
        kind: "permission",
        request: { kind: "plan", tool: "exit_plan_mode", detail: "the agent proposes a plan" },
      };
    case "exec":
      return toolRequest("run_shell_command", text(details.command));
    case "edit":
      return toolRequest(text(details.filePath) ? editTool(details) : "write_file", text(details.filePath));
    default:
      return toolRequest(text(details.title) || "tool", text(details.title) || text(payload.message));
  }
}

/** "Confirm Write: hello.txt" is write_file's dialog, "Confirm Edit: …" replace's. */
function editTool(details: Payload): string {
  return /^Confirm Edit\b/.test(text(details.title)) ? "replace" : "write_file";
}

function toolRequest(tool: string, detail: string): AgentObservation {
  return { kind: "permission", request: { kind: "tool", tool, detail: detail || tool } };
}
