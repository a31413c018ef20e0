import { readFileSync } from "node:fs";
import { randomId } from "../pacing.ts";
import type { ToolCall } from "../rules.ts";
import type { Item } from "./openai-request.ts";

/**
 * A neutral tool call as Codex's own (0.169.0, a catalog model): `exec_command` for Bash and Read
 * (Codex reads files with the shell), `apply_patch` (a freeform custom tool) for Write and Edit,
 * `request_user_input` for AskUserQuestion, `update_plan` for TodoWrite.
 */

const relative = (path: string, cwd: string) =>
  path.startsWith(`${cwd}/`) ? path.slice(cwd.length + 1) : path;

/** exec_command's own options a rule may give beside the command. */
const EXEC_OPTIONS = ["sandbox_permissions", "justification", "prefix_rule", "tty", "yield_time_ms", "login"];

/** What the model knows when it makes a call: the tools offered, the cwd, its permissions. */
export interface CallContext {
  offered: ReadonlyMap<string, Item>;
  cwd: string;
  /** Codex tells the model whether it may ask to run outside the sandbox (not when it never asks). */
  mayEscalate: boolean;
}

export function toCodexCall(tool: ToolCall, context: CallContext): Item {
  const { offered, cwd } = context;
  const input = (tool.input ?? {}) as Record<string, unknown>;
  const callId = randomId("call_");
  const call = (name: string, args: unknown): Item => ({
    type: "function_call",
    id: randomId("fc_"),
    call_id: callId,
    name,
    arguments: JSON.stringify(args),
    status: "completed",
  });
  const patch = (text: string): Item =>
    offered.get("apply_patch")?.type === "custom"
      ? {
          type: "custom_tool_call",
          id: randomId("ctc_"),
          call_id: callId,
          name: "apply_patch",
          input: text,
          status: "completed",
        }
      : call("apply_patch", { input: text });
  switch (tool.name) {
    case "Bash":
      return shellCall(input, context, call);
    case "Read":
      return shellCall(
        {
          command: `cat ${JSON.stringify(String(input.file_path ?? ""))}`,
          sandbox_permissions: "use_default",
        },
        context,
        call,
      );
    case "Write":
      return patch(
        addFilePatch(relative(String(input.file_path ?? "file.txt"), cwd), String(input.content ?? "")),
      );
    case "Edit":
      return patch(editPatch(input, cwd));
    case "AskUserQuestion":
      return call("request_user_input", { questions: userQuestions(input.questions) });
    case "TodoWrite":
      return call("update_plan", input);
    default:
      return call(tool.name, input);
  }
}

/**
 * A command. Unless the rule says otherwise it asks to run outside the sandbox, as a model does
 * for what the sandbox forbids (`require_escalated`, its description as the justification): only
 * then does Codex ask before a command, as Claude Code does for every Bash call. Told that it
 * cannot ask (approval policy never), it runs the command as it is, as a model does.
 */
function shellCall(
  input: Record<string, unknown>,
  { offered, cwd, mayEscalate }: CallContext,
  call: (name: string, args: unknown) => Item,
): Item {
  const command = String(input.command ?? "");
  if (!offered.has("exec_command"))
    return offered.has("shell_command")
      ? call("shell_command", { command, workdir: cwd })
      : call("shell", { command: ["bash", "-lc", command], workdir: cwd });
  const options = Object.fromEntries(
    EXEC_OPTIONS.filter((k) => input[k] !== undefined).map((k) => [k, input[k]]),
  );
  const permissions = options.sandbox_permissions ?? (mayEscalate ? "require_escalated" : "use_default");
  const justification =
    permissions === "require_escalated"
      ? { justification: String(input.description ?? "Run the requested command") }
      : {};
  return call("exec_command", {
    cmd: command,
    workdir: cwd,
    yield_time_ms: 10_000,
    sandbox_permissions: permissions,
    ...justification,
    ...options,
  });
}

function addFilePatch(path: string, content: string): string {
  const lines = content
    .replace(/\n$/, "")
    .split("\n")
    .map((l) => `+${l}`);
  return `*** Begin Patch\n*** Add File: ${path}\n${lines.join("\n")}\n*** End Patch\n`;
}

/**
 * apply_patch replaces whole lines: old_string is widened to the lines that hold it (the mock
 * runs on the agent's machine, so it reads the file), else used as it is.
 */
function editPatch(input: Record<string, unknown>, cwd: string): string {
  const path = String(input.file_path ?? "file.txt");
  const oldString = String(input.old_string ?? "");
  let oldText = oldString;
  let newText = String(input.new_string ?? "");
  let file = "";
  try {
    file = readFileSync(path, "utf8");
  } catch {
    // no such file: the patch fails in Codex, as the edit would
  }
  const at = file.indexOf(oldString);
  if (oldString && at >= 0) {
    const start = file.lastIndexOf("\n", at - 1) + 1;
    const end = file.indexOf("\n", at + oldString.length);
    oldText = file.slice(start, end < 0 ? file.length : end);
    newText = oldText.replace(oldString, newText);
  }
  const lines = [...oldText.split("\n").map((l) => `-${l}`), ...newText.split("\n").map((l) => `+${l}`)];
  return `*** Begin Patch\n*** Update File: ${relative(path, cwd)}\n@@\n${lines.join("\n")}\n*** End Patch\n`;
}

/** AskUserQuestion's questions as request_user_input's (an id, a header of ≤ 12 characters). */
function userQuestions(questions: unknown) {
  const list = Array.isArray(questions) ? (questions as Array<Record<string, unknown>>) : [];
  return list.map((q, i) => ({
    id: String(q.header ?? `q${i + 1}`)
      .toLowerCase()
      .replace(/\W+/g, "_"),
    header: String(q.header ?? "").slice(0, 12),
    question: String(q.question ?? ""),
    options: ((q.options as Array<Record<string, unknown>>) ?? []).map((o) => ({
      label: String(o.label ?? ""),
      description: String(o.description ?? ""),
    })),
  }));
}
