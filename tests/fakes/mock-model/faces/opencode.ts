import type { MessagesBody } from "../choose.ts";
import type { MockReply, ToolCall } from "../rules.ts";
import { replyResponse } from "../sse.ts";
import type { Face } from "./face.ts";

/**
 * OpenCode (1.18) with a custom provider on its bundled `@ai-sdk/anthropic`: the Anthropic
 * Messages API itself (POST /v1/messages, always streamed), with OpenCode's own tools —
 * `bash {command}`, `write {filePath, content}`, `edit {filePath, oldString, newString}`,
 * `question {questions: [{…, multiple}]}` … — renamed here to and from the script's neutral ones.
 * Known by its user agent (`opencode/<version> ai-sdk/…`), so requests of Claude Code on the
 * same path still meet the plain Anthropic face.
 */

type Args = Record<string, unknown>;
type Mapper = (input: Args) => Args;

const same: Mapper = (input) => input;
const rename =
  (pairs: Record<string, string>): Mapper =>
  (input) =>
    Object.fromEntries(Object.entries(input).map(([k, v]) => [pairs[k] ?? k, v]));
const invert = (pairs: Record<string, string>) =>
  Object.fromEntries(Object.entries(pairs).map(([a, b]) => [b, a]));

const FILE = { file_path: "filePath" };
const EDIT = { ...FILE, old_string: "oldString", new_string: "newString", replace_all: "replaceAll" };

interface Question {
  question?: unknown;
  header?: unknown;
  multiSelect?: unknown;
  multiple?: unknown;
  options?: Array<{ label?: unknown; description?: unknown }>;
}
const questionsOf = (input: Args) => (Array.isArray(input.questions) ? (input.questions as Question[]) : []);

/** A neutral tool: its OpenCode name, and its arguments both ways (out: to OpenCode). */
const TOOLS: Record<string, { name: string; out: Mapper; in: Mapper }> = {
  // OpenCode's bash has no `description`: {command, timeout?, workdir?}.
  Bash: { name: "bash", out: ({ description: _, ...rest }) => rest, in: same },
  Write: { name: "write", out: rename(FILE), in: rename(invert(FILE)) },
  Read: { name: "read", out: rename(FILE), in: rename(invert(FILE)) },
  Edit: { name: "edit", out: rename(EDIT), in: rename(invert(EDIT)) },
  Glob: { name: "glob", out: same, in: same },
  Grep: { name: "grep", out: same, in: same },
  WebFetch: { name: "webfetch", out: same, in: same },
  Task: { name: "task", out: same, in: same },
  TodoWrite: { name: "todowrite", out: same, in: same },
  Skill: { name: "skill", out: same, in: same },
  AskUserQuestion: {
    name: "question",
    out: (input) => ({
      questions: questionsOf(input).map((q) => ({
        question: q.question,
        header: q.header,
        options: (q.options ?? []).map((o) => ({ label: o.label, description: o.description ?? "" })),
        ...(q.multiSelect ? { multiple: true } : {}),
      })),
    }),
    in: (input) => ({
      questions: questionsOf(input).map(({ multiple, ...q }) => ({ ...q, multiSelect: multiple === true })),
    }),
  },
};
const NEUTRAL: Record<string, string> = Object.fromEntries(
  Object.entries(TOOLS).map(([neutral, tool]) => [tool.name, neutral]),
);
const neutralName = (name: unknown) => NEUTRAL[String(name)] ?? String(name);

function toolOut(call: ToolCall): ToolCall {
  const tool = TOOLS[call.name];
  return tool ? { name: tool.name, input: tool.out(call.input ?? {}) } : call;
}

/** The script's reply with its tool calls in OpenCode's names and shapes. */
function replyOut(spec: MockReply): MockReply {
  const out: MockReply = { ...spec };
  if (spec.tool) out.tool = toolOut(spec.tool);
  if (spec.tools) out.tools = spec.tools.map(toolOut);
  if (spec.blocks)
    out.blocks = spec.blocks.map((b) =>
      b.type === "tool_use"
        ? { ...b, ...toolOut({ name: String(b.name), input: (b.input as Args) ?? {} }) }
        : b,
    );
  if (spec.fallback) out.fallback = replyOut(spec.fallback);
  return out;
}

/** A past tool call of the conversation, read back as the neutral call. */
function blockIn(block: Args): Args {
  if (block.type !== "tool_use") return block;
  const name = neutralName(block.name);
  const input = (block.input as Args) ?? {};
  return { ...block, name, input: TOOLS[name]?.in(input) ?? input };
}

/**
 * OpenCode's title request says it is a title generator and asks for JSON-free text, yet
 * mentions "json": the script would answer JSON, which OpenCode would show as the title.
 */
const TITLE_SYSTEM = "You are a title generator";

export const opencodeFace: Face = {
  name: "opencode",
  handles: (method, path, request) =>
    method === "POST" &&
    path === "/v1/messages" &&
    /^opencode\//.test(request?.headers.get("user-agent") ?? ""),
  read(body) {
    const b = body as MessagesBody;
    const title = JSON.stringify(b.system ?? "").includes(TITLE_SYSTEM);
    return {
      model: b.model,
      stream: Boolean(b.stream),
      system: title ? "Generate a title for this conversation." : b.system,
      messages: (b.messages ?? []).map((m) => ({
        ...m,
        content: Array.isArray(m.content) ? (m.content as Args[]).map(blockIn) : m.content,
      })),
      tools: (b.tools ?? []).map((t) => ({ ...t, name: neutralName(t.name) })),
    };
  },
  reply: (request, body, _raw, spec, defaults, settle) =>
    replyResponse(request, body, replyOut(spec), defaults, settle),
};
