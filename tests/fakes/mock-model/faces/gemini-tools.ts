import { resolve } from "node:path";
import type { ToolCall } from "../rules.ts";

/**
 * The Gemini CLI's (0.61.0) built-in tools and the neutral names the mock's script uses, both
 * ways, with their argument shapes:
 *   run_shell_command {command, description?}              ↔ Bash {command, description}
 *   write_file {file_path, content}                        ↔ Write {file_path, content}
 *   replace {file_path, old_string, new_string, instruction} ↔ Edit (instruction is required)
 *   read_file {file_path}                                  ↔ Read
 *   ask_user {questions: [{question, header ≤ 16, type, options, multiSelect}]} ↔ AskUserQuestion
 *   exit_plan_mode {plan_filename} (a bare file name)      ↔ ExitPlanMode
 */
const TO_NEUTRAL: Record<string, string> = {
  run_shell_command: "Bash",
  write_file: "Write",
  replace: "Edit",
  read_file: "Read",
  ask_user: "AskUserQuestion",
  exit_plan_mode: "ExitPlanMode",
  enter_plan_mode: "EnterPlanMode",
  write_todos: "TodoWrite",
  glob: "Glob",
  grep_search: "Grep",
  list_directory: "LS",
  web_fetch: "WebFetch",
  google_web_search: "WebSearch",
};
const FROM_NEUTRAL: Record<string, string> = Object.fromEntries(
  Object.entries(TO_NEUTRAL).map(([gemini, neutral]) => [neutral, gemini]),
);

type Args = Record<string, unknown>;

export function neutralToolName(name: string): string {
  return TO_NEUTRAL[name] ?? name;
}

/** A Gemini CLI call as the script reads it. */
export function toNeutralCall(name: string, args: Args): { name: string; input: Args } {
  const neutral = neutralToolName(name);
  if (neutral === "Bash")
    return { name: neutral, input: { command: args.command, description: args.description } };
  return { name: neutral, input: args };
}

/** Where plan mode lets write_file write, and the last plan written: from the request. */
export interface PlanContext {
  plansDir?: string;
  lastPlan?: string;
}

/** A neutral call of the script as the Gemini CLI's own tool and arguments. */
export function toGeminiCall(tool: ToolCall, plan: PlanContext = {}): { name: string; args: Args } {
  const input = (tool.input ?? {}) as Args;
  const name = FROM_NEUTRAL[tool.name] ?? tool.name;
  switch (tool.name) {
    case "Bash":
      return {
        name,
        args: { command: input.command, ...(input.description ? { description: input.description } : {}) },
      };
    case "Edit":
      return {
        name,
        args: {
          file_path: input.file_path,
          old_string: input.old_string,
          new_string: input.new_string,
          instruction: input.instruction ?? "Apply the requested change.",
        },
      };
    case "AskUserQuestion":
      return { name, args: { questions: ((input.questions as Args[]) ?? []).map(askedQuestion) } };
    case "ExitPlanMode": {
      const path = String(input.plan_filename ?? input.file_path ?? plan.lastPlan ?? "plan.md");
      return { name, args: { plan_filename: path.split("/").pop() || "plan.md" } };
    }
    case "Write": {
      // In plan mode write_file may only write inside the plans directory the system prompt names.
      const file = String(input.file_path ?? "");
      const planFile = /\/plans\/[^/]+$/.test(file) || /mock-plan\.md$/.test(file);
      const path = plan.plansDir && planFile ? `${plan.plansDir}/${file.split("/").pop()}` : file;
      return { name, args: { file_path: path, content: input.content } };
    }
    default:
      return { name, args: input };
  }
}

function askedQuestion(q: Args): Args {
  const options = Array.isArray(q.options) ? q.options : undefined;
  return {
    question: q.question,
    header: String(q.header ?? "Question").slice(0, 16),
    type: q.type ?? (options?.length ? "choice" : "text"),
    ...(options ? { options } : {}),
    ...(q.multiSelect !== undefined ? { multiSelect: q.multiSelect } : {}),
  };
}

type Content = { role?: string; parts?: Array<{ functionCall?: { name?: string; args?: Args } }> };

/**
 * The plan mode of a request: the plans directory its system instruction names, relative to the
 * cwd ("Save your plans as Markdown (.md) files ONLY within: `../home/.gemini/tmp/work/<id>/plans/`"),
 * and the last plan file the conversation wrote there.
 */
export function planContext(raw: Record<string, unknown>, cwd: string): PlanContext {
  const system = JSON.stringify(raw.systemInstruction ?? "");
  const dir = system.match(/ONLY within:\s*`([^`]+?)\/?`/)?.[1];
  let lastPlan: string | undefined;
  for (const content of (raw.contents as Content[]) ?? [])
    for (const part of content.parts ?? []) {
      const call = part.functionCall;
      if (call?.name === "write_file" && /\/plans\//.test(String(call.args?.file_path ?? "")))
        lastPlan = String(call.args!.file_path);
    }
  return { ...(dir ? { plansDir: resolve(cwd, dir) } : {}), ...(lastPlan ? { lastPlan } : {}) };
}
