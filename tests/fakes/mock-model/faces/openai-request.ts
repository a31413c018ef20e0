import type { MessagesBody } from "../choose.ts";

/**
 * An OpenAI Responses API request (as Codex CLI 0.169.0 sends it) read as the neutral body the
 * script reads. Codex sends no `instructions`: its system prompt is the first `developer`
 * message, and the cwd sits in a `user` message of its own (`<environment_context><cwd>…`).
 */

export type Item = Record<string, unknown> & { type?: string };
type Block = Record<string, unknown> & { type: string };

/** Codex's tool names → the neutral ones the rules use (apply_patch serves Write and Edit). */
export const TO_NEUTRAL: Record<string, string> = {
  exec_command: "Bash",
  shell: "Bash",
  shell_command: "Bash",
  local_shell: "Bash",
  apply_patch: "Write",
  request_user_input: "AskUserQuestion",
  update_plan: "TodoWrite",
  view_image: "Read",
};

/** A user message Codex writes itself (context, instructions, markers): one `<tag>…</tag>`, or known heads. */
function isContext(text: string): boolean {
  const t = text.trimStart();
  return t.startsWith("# AGENTS.md instructions") || /^<([a-z_ ]+)>[\s\S]*<\/\1>\s*$/.test(t);
}

export function contentText(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return (content as Block[])
    .filter((c) => c.type === "input_text" || c.type === "output_text" || c.type === "text")
    .map((c) => String(c.text ?? ""))
    .join("\n");
}

function outputText(output: unknown): string {
  if (typeof output === "string") return output;
  if (Array.isArray(output)) return contentText(output);
  return JSON.stringify(output ?? "");
}

/** The cwd Codex told the model last (its environment context), else a tool call's workdir. */
function cwdOf(input: Item[]): string {
  const text = JSON.stringify(input);
  const cwd = [...text.matchAll(/<cwd>([^<]+)<\/cwd>/g)].at(-1)?.[1];
  return cwd ?? [...text.matchAll(/\\"workdir\\":\s*\\"([^"\\]+)/g)].at(-1)?.[1] ?? process.cwd();
}

function argumentsOf(item: Item): Record<string, unknown> {
  let args: unknown = item.arguments ?? item.input ?? item.action;
  if (typeof args === "string" && item.type === "function_call") {
    try {
      args = JSON.parse(args);
    } catch {
      // a half-written call: its text as it is
    }
  }
  return typeof args === "object" && args !== null ? (args as Record<string, unknown>) : { input: args };
}

export function readResponsesRequest(raw: Record<string, unknown>): MessagesBody {
  const input: Item[] = Array.isArray(raw.input)
    ? (raw.input as Item[])
    : typeof raw.input === "string"
      ? [{ type: "message", role: "user", content: raw.input }]
      : [];
  const messages: Array<{ role: string; content: Block[] }> = [];
  const push = (role: string, block: Block) => {
    const last = messages.at(-1);
    if (last?.role === role) last.content.push(block);
    else messages.push({ role, content: [block] });
  };
  const developer: string[] = [];
  for (const item of input) {
    const type = item.type ?? (item.role ? "message" : "");
    if (type === "message") {
      const text = contentText(item.content);
      if (item.role === "user" && !isContext(text)) push("user", { type: "text", text });
      else if (item.role === "assistant") push("assistant", { type: "text", text });
      else if (item.role === "developer" || item.role === "system") developer.push(text);
    } else if (type === "function_call" || type === "custom_tool_call" || type === "local_shell_call") {
      const name = String(item.name ?? "local_shell");
      const id = String(item.call_id ?? item.id ?? "");
      push("assistant", { type: "tool_use", id, name: TO_NEUTRAL[name] ?? name, input: argumentsOf(item) });
    } else if (type === "function_call_output" || type === "custom_tool_call_output") {
      const id = String(item.call_id ?? "");
      push("user", { type: "tool_result", tool_use_id: id, content: outputText(item.output) });
    }
  }
  // A request for JSON by schema (Codex's task title, on a thread of its own) is a side request,
  // whatever tools it lists.
  const format = (raw.text as { format?: { type?: string; schema?: unknown } } | undefined)?.format;
  const side = format?.type === "json_schema";
  const names = side
    ? []
    : (Array.isArray(raw.tools) ? (raw.tools as Item[]) : []).map((t) => String(t.name ?? t.type));
  const tools = names.map((name) => ({ name: TO_NEUTRAL[name] ?? name }));
  if (tools.some((t) => t.name === "Write")) tools.push({ name: "Edit" });
  const schema = side ? `\nRespond with JSON matching: ${JSON.stringify(format?.schema)}` : "";
  return {
    model: typeof raw.model === "string" ? raw.model : undefined,
    stream: raw.stream === true,
    system: `Working directory: ${cwdOf(input)}\n${String(raw.instructions ?? "")}\n${developer.join("\n")}${schema}`,
    messages,
    tools,
  };
}
