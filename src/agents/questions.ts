import type { PermissionRequest } from "./agent.ts";

const ASKED = "the agent asks a question";

/**
 * A question tool's input, `{questions: [{question, header, multiSelect, options: [{label,
 * description}]}]}` (Claude Code's AskUserQuestion, the Gemini CLI's ask_user; OpenCode's
 * question tool says `multiple` for `multiSelect`), as the pending
 * question: its first question and that question's options, numbered as the dialog numbers them
 * (each dialog adds rows of its own after them, for an answer of one's own).
 */
interface AskedQuestion {
  question?: unknown;
  multiSelect?: unknown;
  multiple?: unknown;
  options?: Array<{ label?: unknown; description?: unknown }>;
}

const text = (value: unknown): string => (typeof value === "string" ? value : "");

export function questionRequest(input: unknown, tool: string): PermissionRequest {
  const questions = (input as { questions?: AskedQuestion[] } | undefined)?.questions;
  const first = Array.isArray(questions) ? questions[0] : undefined;
  const question = text(first?.question) || ASKED;
  const options = (Array.isArray(first?.options) ? first.options : [])
    .map((o, i) => ({ index: i + 1, label: text(o?.label), description: text(o?.description) || undefined }))
    .filter((o) => o.label !== "");
  const more = Array.isArray(questions) && questions.length > 1 ? { questions: questions.length } : {};
  return {
    kind: "question",
    tool,
    detail: question,
    question,
    ...(options.length ? { options } : {}),
    ...(first?.multiSelect === true || first?.multiple === true ? { multiSelect: true } : {}),
    ...more,
  };
}

/** A question read from a dialog on the screen (its hook, when there is one, says more). */
export function screenQuestion(
  tool: string,
  question: string | null | undefined,
  options: NonNullable<PermissionRequest["options"]>,
): PermissionRequest {
  const asked = question ?? ASKED;
  return { kind: "question", tool, detail: asked, question: asked, ...(options.length ? { options } : {}) };
}
