import { defineCommand } from "citty";
import { AgError } from "../../shared/errors.ts";
import { handle } from "../answers.ts";
import { GLOBAL_ARGS, SESSION_ARG } from "../args.ts";
import { connect } from "../connect.ts";
import { plural, printJson, printLine, printNote } from "../output.ts";
import { resolveSession, sessionPath } from "../resolve.ts";
import { createTimeoutMs } from "./create.ts";

interface Delivery {
  delivered: boolean;
  attempts: number;
  reason?: string;
  answered?: boolean;
}

/**
 * The message as given, or stdin's whole text for `-`: a multi-line text is one message (the
 * server pastes it as one). The line end a shell or an editor leaves at the end is not part of it.
 */
export async function messageText(given: string, stdin: () => Promise<string>): Promise<string> {
  const text = given === "-" ? (await stdin()).replace(/(\r?\n)+$/, "") : given;
  if (text.trim() === "")
    throw new AgError("USAGE_ERROR", "the message is empty: give its text, or - to read it from stdin");
  return text;
}

/** `ag send <session> "text"`: POST /v1/sessions/:id/send, once the agent has taken it. */
export default defineCommand({
  meta: { name: "send", description: "Send a message to a session (- reads it from stdin)" },
  args: {
    ...GLOBAL_ARGS,
    session: SESSION_ARG,
    text: {
      type: "positional",
      required: true,
      description: 'The message; "-" reads it from stdin (several lines stay one message)',
    },
    json: { type: "boolean", description: "Machine-readable output" },
  },
  async run({ args }) {
    if (args.text === "-" && process.stdin.isTTY)
      printNote("reading the message from stdin: end it with Ctrl+D");
    const text = await messageText(args.text, () => Bun.stdin.text());
    // Delivery is confirmed by the agent and retried: it may take as long as a creation.
    const { client } = connect(args, { timeoutMs: (c) => createTimeoutMs(c.createWaitMs) });
    const session = await resolveSession(client, args.session);
    const result = await client.send<Delivery>("POST", sessionPath(session.id, "send"), { text });
    if (args.json) printJson(result);
    if (!result.delivered) {
      throw new AgError(
        "AGENT_UNAVAILABLE",
        `${session.name} did not take the message (${plural(result.attempts, "attempt")}${result.reason ? `: ${result.reason}` : ""})`,
      );
    }
    if (args.json) return;
    if (result.answered) printLine(`answered the question of ${session.name}: ${text}`);
    else printLine(`sent to ${session.name} (${plural(result.attempts, "attempt")})`);
    printNote(`follow it: ag tail ${handle(session)}`);
  },
});
