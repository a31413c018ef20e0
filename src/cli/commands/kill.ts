import { defineCommand } from "citty";
import type { Session } from "../../sessions/index.ts";
import { GLOBAL_ARGS, SESSION_ID_ARG } from "../args.ts";
import { connect, resolveSessionId } from "../connect.ts";
import { printJson, printLine } from "../output.ts";

/** `ag kill <id>`: DELETE /v1/sessions/:id — the agent's window closes. */
export default defineCommand({
  meta: { name: "kill", description: "Kill a session (its agent window closes)" },
  args: {
    ...GLOBAL_ARGS,
    id: SESSION_ID_ARG,
    json: { type: "boolean", description: "Machine-readable output" },
  },
  async run({ args }) {
    const { client } = connect(args);
    const id = await resolveSessionId(client, args.id);
    const session = await client.send<Session>("DELETE", `/v1/sessions/${encodeURIComponent(id)}`);
    if (args.json) return printJson(session);
    printLine(`killed ${session.id} (${session.name})`);
  },
});
