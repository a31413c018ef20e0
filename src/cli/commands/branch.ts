import { dashboardUrl } from "../connect.ts";
import { printFields } from "../output.ts";
import { resolveSessionId, sessionPath } from "../resolve.ts";
import { sessionVerb } from "../session-verb.ts";
import { type Created, createdFields, createTimeoutMs } from "./create.ts";

/**
 * `ag fork <session>` (POST /fork: a new session carrying a copy of the conversation, in the same
 * workDir) and `ag resume <session>` (POST /resume: an ended session's conversation relaunched
 * under its own id). Both print the session as `ag create` does.
 */
function branchCommand(name: "fork" | "resume", description: string) {
  return sessionVerb({
    name,
    description,
    json: "Machine-readable output: the API's answer",
    timeoutMs: (c) => createTimeoutMs(c.createWaitMs),
    async act(client, given, { loaded }) {
      const id = await resolveSessionId(client, given);
      const created = await client.send<Created>("POST", sessionPath(id, name));
      return {
        json: created,
        print: () => printFields(createdFields(created, dashboardUrl(loaded, client.baseUrl))),
      };
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
