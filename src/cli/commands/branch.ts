import { defineCommand } from "citty";
import { GLOBAL_ARGS, SESSION_ARG } from "../args.ts";
import { connect, dashboardUrl } from "../connect.ts";
import { printFields, printJson } from "../output.ts";
import { resolveSessionId, sessionPath } from "../resolve.ts";
import { type Created, createdFields, createTimeoutMs } from "./create.ts";

/**
 * `ag fork <session>` (POST /fork: a new session carrying a copy of the conversation, in the same
 * workDir) and `ag resume <session>` (POST /resume: an ended session's conversation relaunched
 * under its own id). Both print the session as `ag create` does.
 */
function branchCommand(name: "fork" | "resume", description: string) {
  return defineCommand({
    meta: { name, description },
    args: {
      ...GLOBAL_ARGS,
      session: SESSION_ARG,
      json: { type: "boolean", description: "Machine-readable output: the API's answer" },
    },
    async run({ args }) {
      const { loaded, client } = connect(args, { timeoutMs: (c) => createTimeoutMs(c.createWaitMs) });
      const id = await resolveSessionId(client, args.session);
      const created = await client.send<Created>("POST", sessionPath(id, name));
      if (args.json) return printJson(created);
      printFields(createdFields(created, dashboardUrl(loaded, client.baseUrl)));
    },
  });
}

export const forkCommand = branchCommand(
  "fork",
  "A new session that continues a copy of the session's conversation (a new branch, same folder)",
);
export const resumeCommand = branchCommand(
  "resume",
  "Bring an ended session's conversation back in a new window, under its own id",
);
