import type { PendingPermission, Session } from "../sessions/index.ts";
import { describeError } from "../shared/errors.ts";
import {
  answeredLine,
  answerQuestion,
  type Decision,
  decide,
  handle,
  optionLabel,
  type QuestionAnswer,
  type SessionRef,
} from "./answers.ts";
import type { ApiClient } from "./client.ts";
import { readKey, readLine } from "./keys.ts";
import { answerHint, pendingSummary } from "./views.ts";

/**
 * `ag run` at a terminal: when the agent stops for a permission, a plan or a question, the person
 * answers right there with one key — y approves, n rejects, a number picks an option, t types an
 * answer, a attaches this terminal to the agent's own screen (to look, or to pick one of its
 * choices ag does not offer), Enter leaves it for later (ag approve / ag answer, the dashboard).
 * The question is withdrawn as soon as the session moves on (answered elsewhere).
 */

export interface PromptDeps {
  decide(session: SessionRef, decision: Decision): Promise<SessionRef>;
  answerQuestion(session: SessionRef, answer: QuestionAnswer): Promise<SessionRef>;
  /** Runs while the person is attached; output is held back meanwhile. */
  attach(): Promise<void>;
  note(text: string): void;
  readKey(signal: AbortSignal): Promise<string | null>;
  readLine(question: string, signal: AbortSignal): Promise<string | null>;
}

export function terminalPromptDeps(
  client: ApiClient,
  attach: () => Promise<void>,
  note: (text: string) => void,
): PromptDeps {
  return {
    decide: (session, decision) => decide(client, session, decision),
    answerQuestion: (session, answer) => answerQuestion(client, session, answer),
    attach,
    note,
    readKey: (signal) => readKey(signal),
    readLine,
  };
}

export function promptText(pending: PendingPermission): string {
  if (pending.kind === "question") {
    const options = (pending.options ?? []).map(
      (o) => `  ${o.index}. ${o.label}${o.description ? ` — ${o.description}` : ""}`,
    );
    return [
      `the agent asks: ${pending.question ?? pending.detail}`,
      ...options,
      "  [number] pick it · [t]ype an answer · [a]ttach to its terminal · [Enter] later",
    ].join("\n");
  }
  const what = pending.kind === "plan" ? "the agent's plan" : pendingSummary(pending);
  return `allow ${what}?  [y]es · [n]o · [a]ttach to its terminal · [Enter] later`;
}

/**
 * Asks until the person has answered, left it for later, or `signal` aborts (the prompt went
 * away, the turn ended, Ctrl+C). Returns what happened, for the caller's bookkeeping.
 */
export async function askAtTerminal(
  session: Session,
  pending: PendingPermission,
  signal: AbortSignal,
  deps: PromptDeps,
): Promise<"answered" | "later" | "withdrawn"> {
  const before: SessionRef = {
    ...session,
    status: pending.kind === "question" ? "asking" : "permission_prompt",
    pendingPermission: pending,
  };
  const question = pending.kind === "question";
  for (;;) {
    deps.note(promptText(pending));
    const key = await deps.readKey(signal);
    if (key === null || signal.aborted) return "withdrawn";
    try {
      if (!question && (key === "y" || key === "n")) {
        const after = await deps.decide(before, key === "y" ? "approve" : "reject");
        deps.note(answeredLine(key === "y" ? "approved" : "rejected", before, after));
        return "answered";
      }
      if (question && /^[1-9]$/.test(key)) {
        const option = Number(key);
        const after = await deps.answerQuestion(before, { option });
        deps.note(`${answeredLine("answered", before, after)}: ${optionLabel(pending, option)}`);
        return "answered";
      }
      if (question && key === "t") {
        const text = await deps.readLine("your answer: ", signal);
        if (signal.aborted) return "withdrawn";
        if (!text?.trim()) continue;
        const after = await deps.answerQuestion(before, { text });
        deps.note(`${answeredLine("answered", before, after)}: "${text}"`);
        return "answered";
      }
    } catch (error) {
      deps.note(`that did not work: ${describeError(error)}`);
      if (signal.aborted) return "withdrawn";
      continue;
    }
    if (key === "a") {
      try {
        await deps.attach();
      } catch (error) {
        deps.note(`could not attach: ${describeError(error)}`);
      }
      if (signal.aborted) return "withdrawn";
      continue;
    }
    if (key === "enter" || key === "escape" || key === "q") {
      deps.note(`left for later: ${answerHint(pending, handle(session))}`);
      return "later";
    }
    // Any other key: ask again.
  }
}
