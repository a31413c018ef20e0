import { defineCommand } from "citty";
import type { Session } from "../../sessions/index.ts";
import { GLOBAL_ARGS, SESSION_ARG } from "../args.ts";
import { connect } from "../connect.ts";
import { printJson, printLine } from "../output.ts";
import { resolveSession, sessionPath } from "../resolve.ts";

/** `ag interrupt` (Ctrl+C: stop the agent's turn) and `ag escape` (Escape: close a menu or dialog). */
function keyCommand(name: "interrupt" | "escape", description: string, done: (s: Session) => string) {
  return defineCommand({
    meta: { name, description },
    args: {
      ...GLOBAL_ARGS,
      session: SESSION_ARG,
      json: { type: "boolean", description: "Machine-readable output: the session afterwards" },
    },
    async run({ args }) {
      const { client } = connect(args);
      const session = await resolveSession(client, args.session);
      const after = await client.send<Session>("POST", sessionPath(session.id, name));
      if (args.json) return printJson(after);
      printLine(`${done(after)} (now ${after.status})`);
    },
  });
}

export const interruptCommand = keyCommand(
  "interrupt",
  "Stop the session's current turn (Ctrl+C in the agent)",
  (s) => `interrupted ${s.name}`,
);
export const escapeCommand = keyCommand(
  "escape",
  "Press Escape in the session (closes a menu or dialog)",
  (s) => `pressed Escape in ${s.name}`,
);
