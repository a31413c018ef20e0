import { defineCommand } from "citty";
import type { Session } from "../../sessions/index.ts";
import { GLOBAL_ARGS, SESSION_ARG } from "../args.ts";
import { connect } from "../connect.ts";
import { printJson, printLine, printNote } from "../output.ts";
import { resolveSession, sessionPath } from "../resolve.ts";
import { createTimeoutMs } from "./create.ts";

/** `ag handoff <session> --agent codex`: POST /v1/sessions/:id/handoff — another agent takes the task over. */
export default defineCommand({
  meta: {
    name: "handoff",
    description: "Hand a session's task to a new session of another agent (--agent) in the same folder",
  },
  args: {
    ...GLOBAL_ARGS,
    session: SESSION_ARG,
    agent: { type: "string", required: true, description: "The agent CLI to hand it to", valueHint: "agent" },
    driver: { type: "string", description: "tmux (default) or acp", valueHint: "tmux|acp" },
    note: { type: "string", description: "A word for the next agent, added to the brief", valueHint: "text" },
    json: { type: "boolean", description: "Machine-readable output: {from, to, brief}" },
  },
  async run({ args }) {
    // A new agent starts: as long as a creation may take.
    const { client } = connect(args, { timeoutMs: (c) => createTimeoutMs(c.createWaitMs) });
    const session = await resolveSession(client, args.session);
    const result = await client.send<{ from: Session; to: Session; brief: string }>(
      "POST",
      sessionPath(session.id, "handoff"),
      {
        agent: args.agent,
        ...(args.driver ? { driver: args.driver } : {}),
        ...(args.note ? { note: args.note } : {}),
      },
    );
    if (args.json) return printJson(result);
    printLine(
      `handed ${session.name} (${session.agent}) to ${result.to.name} (${result.to.agent}, ${result.to.id.slice(0, 8)})`,
    );
    printNote(`follow it: ag tail ${result.to.id.slice(0, 8)}`);
  },
});
