import { defineCommand } from "citty";
import { answeredLine, type Decision, decide } from "../answers.ts";
import { GLOBAL_ARGS, SESSION_ARG } from "../args.ts";
import { connect } from "../connect.ts";
import { printJson, printLine } from "../output.ts";
import { resolveSession } from "../resolve.ts";

/** `ag approve <session>` and `ag reject <session>`: the pending permission prompt, once. */
function decisionCommand(decision: Decision, description: string, done: string) {
  return defineCommand({
    meta: { name: decision, description },
    args: {
      ...GLOBAL_ARGS,
      session: SESSION_ARG,
      json: { type: "boolean", description: "Machine-readable output: the session after the answer" },
    },
    async run({ args }) {
      const { client } = connect(args);
      const session = await resolveSession(client, args.session);
      const after = await decide(client, session, decision);
      if (args.json) return printJson(after);
      printLine(answeredLine(done, session, after));
    },
  });
}

export const approve = decisionCommand(
  "approve",
  "Allow what the session asks permission for (a tool call, a plan), once",
  "approved",
);
export const reject = decisionCommand("reject", "Refuse what the session asks permission for", "rejected");
