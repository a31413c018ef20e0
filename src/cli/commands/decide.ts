import { answeredLine, type Decision, decide } from "../answers.ts";
import { printLine } from "../output.ts";
import { resolveSession } from "../resolve.ts";
import { sessionVerb } from "../session-verb.ts";

/** `ag approve <session>` and `ag reject <session>`: the pending permission prompt, once. */
function decisionCommand(decision: Decision, description: string, done: string) {
  return sessionVerb({
    name: decision,
    description,
    json: "Machine-readable output: the session after the answer",
    async act(client, given) {
      const session = await resolveSession(client, given);
      const after = await decide(client, session, decision);
      return { json: after, print: () => printLine(answeredLine(done, session, after)) };
    },
  });
}

export const approve = decisionCommand(
  "approve",
  "Allow what the session asks permission for (a tool call, a plan), once",
  "approved",
);
export const reject = decisionCommand("reject", "Refuse what the session asks permission for", "rejected");
