import type { KeyStep } from "./agent.ts";
import type { PendingPermission } from "./vocabulary.ts";

/**
 * The keys that answer a question dialog numbered as the agent's options are, with a row for an
 * answer of one's own after them (Claude Code's "Type something.", OpenCode's "Type your own
 * answer", Gemini CLI's "Enter a custom value"). An option's digit alone picks and submits it;
 * past nine, Down to it and Enter. An own answer: that row's digit, the text, Enter. Each step
 * is its own key press (keys sent together in one call were seen to be dropped).
 * `unknownOwnRow`: that row's number when the options were not read (a question seen only on
 * screen, cut off).
 */
export function questionAnswerKeys(
  pending: PendingPermission,
  answer: { option: number } | { text: string },
  unknownOwnRow = 3,
): KeyStep[] {
  const count = pending.options?.length ?? 0;
  const pick = (n: number): KeyStep[] =>
    n <= 9
      ? [{ keys: [String(n)] }]
      : [...Array.from({ length: n - 1 }, () => ({ keys: ["Down"] })), { keys: ["Enter"] }];
  if ("option" in answer) return pick(answer.option);
  const ownRow = count > 0 ? count + 1 : unknownOwnRow;
  return [...pick(ownRow), { text: answer.text }, { keys: ["Enter"] }];
}
