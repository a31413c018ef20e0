import { defineCommand } from "citty";
import type { Session } from "../../sessions/index.ts";
import { GLOBAL_ARGS, SESSION_ARG } from "../args.ts";
import { connect } from "../connect.ts";
import { printJson, printLine } from "../output.ts";
import { resolveSessionId, sessionPath } from "../resolve.ts";

/** `ag kill <session>`: DELETE /v1/sessions/:id — the agent's window closes. */
export default defineCommand({
  meta: { name: "kill", description: "Kill a session (its agent window closes)" },
  args: {
    ...GLOBAL_ARGS,
    session: SESSION_ARG,
    json: { type: "boolean", description: "Machine-readable output" },
  },
  async run({ args }) {
    const { client } = connect(args);
    const id = await resolveSessionId(client, args.session);
    const session = await client.send<Session>("DELETE", sessionPath(id));
    if (args.json) return printJson(session);
    printLine(`killed ${session.id} (${session.name})`);
  },
});
