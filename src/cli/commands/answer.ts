import { defineCommand } from "citty";
import { AgError } from "../../shared/errors.ts";
import { answeredLine, answerQuestion, optionLabel, type QuestionAnswer } from "../answers.ts";
import { GLOBAL_ARGS, SESSION_ARG } from "../args.ts";
import { connect } from "../connect.ts";
import { printJson, printLine } from "../output.ts";
import { resolveSession } from "../resolve.ts";

/** The answer the arguments give: an option's number, or --text; exactly one of them. */
export function parseAnswer(option: string | undefined, text: string | undefined): QuestionAnswer {
  if ((option === undefined) === (text === undefined)) {
    throw new AgError("USAGE_ERROR", 'give the number of an option, or --text "…" for an answer of your own');
  }
  if (text !== undefined) {
    if (text.trim() === "") throw new AgError("USAGE_ERROR", "--text is empty");
    return { text };
  }
  if (!/^\d+$/.test(option!) || Number(option) < 1)
    throw new AgError("USAGE_ERROR", `an option is a number from 1, got "${option}"`);
  return { option: Number(option) };
}

/** `ag answer <session> <option>` / `--text "…"`: the question the agent asks. */
export default defineCommand({
  meta: { name: "answer", description: "Answer the session's question: an option's number, or --text" },
  args: {
    ...GLOBAL_ARGS,
    session: SESSION_ARG,
    option: { type: "positional", required: false, description: "The number of the option to pick" },
    text: { type: "string", description: "An answer of your own instead of an option", valueHint: "answer" },
    json: { type: "boolean", description: "Machine-readable output: the session after the answer" },
  },
  async run({ args }) {
    const answer = parseAnswer(args.option, args.text);
    const { client } = connect(args);
    const session = await resolveSession(client, args.session);
    const after = await answerQuestion(client, session, answer);
    if (args.json) return printJson(after);
    const given =
      "option" in answer ? optionLabel(session.pendingPermission, answer.option) : `"${answer.text}"`;
    printLine(`${answeredLine("answered", session, after)}: ${given}`);
  },
});
