import { answerForm } from "./answer.ts";
import type { CollectedChange } from "./change.ts";
import { typeable } from "./change.ts";

/** The session's last answer is quoted up to this much. */
const MAX_ANSWER_CHARS = 8_000;

/**
 * What every reviewer of one run is told, word for word the same: its role, the criteria, the
 * change, the session's last answer, and the form to answer in. Nothing of the other reviewers.
 */
export function reviewBrief(input: {
  reviewers: number;
  sessionName: string;
  criteria: readonly string[];
  change: CollectedChange;
  lastAnswer: string;
}): string {
  const criteria = input.criteria.map((c, i) => `${i + 1}. ${typeable(c).replace(/\n+/g, " ")}`);
  const answer = typeable(input.lastAnswer.trim()) || "(none)";
  const quoted = answer.length > MAX_ANSWER_CHARS ? `${answer.slice(0, MAX_ANSWER_CHARS)}\n[… cut]` : answer;
  return [
    `You are one of ${input.reviewers} independent reviewers of the work of a coding agent (session "${input.sessionName}") in this folder.`,
    "Judge the work against each criterion below. You may read the project's files to check; change nothing and run no commands. Answer in text: do not write a plan.",
    "",
    "Criteria:",
    ...criteria,
    "",
    `The change under review: ${input.change.description}.`,
    "<<<CHANGE",
    input.change.text.trim() || "(no change)",
    "CHANGE>>>",
    "",
    "The agent's last answer:",
    "<<<ANSWER",
    quoted,
    "ANSWER>>>",
    "",
    "End your answer with exactly these lines, one per criterion in order, then the verdict:",
    answerForm(input.criteria.length),
  ].join("\n");
}

/** Asked once of a reviewer whose answer could not be read. */
export function restateBrief(reason: string, criteria: number): string {
  return [
    `Your review could not be read (${reason}). Restate your judgement in exactly this form, with nothing else:`,
    answerForm(criteria),
  ].join("\n");
}
