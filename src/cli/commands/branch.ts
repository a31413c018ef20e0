import { dashboardUrl } from "../connect.ts";
import { parseHit } from "../hits.ts";
import { printFields } from "../output.ts";
import { resolveSessionId, sessionPath } from "../resolve.ts";
import { sessionVerb } from "../session-verb.ts";
import { type Created, createdFields, createTimeoutMs } from "./create.ts";

/**
 * `ag fork <session>` (POST /fork: a new session carrying a copy of the conversation, in the same
 * workDir) and `ag resume <session>` (POST /resume: an ended session's conversation relaunched
 * under its own id). Both print the session as `ag create` does. Given a search hit
 * (`<session>#<message>`, `ag search`), they act on its session; an external conversation's hit
 * (`claude:<id>#<message>`) becomes a new session continuing it, always as a fork (POST
 * /v1/search/continue): the user's own file is never written.
 */
function branchCommand(name: "fork" | "resume", description: string) {
  return sessionVerb({
    name,
    description,
    json: "Machine-readable output: the API's answer",
    timeoutMs: (c) => createTimeoutMs(c.createWaitMs),
    async act(client, given, { loaded }) {
      // A search hit: its session resumed or forked, or an external conversation continued.
      const created = parseHit(given)
        ? await client.send<Created>("POST", "/v1/search/continue", { hit: given, fork: name === "fork" })
        : await client.send<Created>("POST", sessionPath(await resolveSessionId(client, given), name));
      return {
        json: created,
        print: () => printFields(createdFields(created, dashboardUrl(loaded, client.baseUrl))),
      };
    },
  });
}

export const forkCommand = branchCommand(
  "fork",
  "A new session that continues a copy of the session's conversation (a new branch, same folder); or of a search hit's",
);
export const resumeCommand = branchCommand(
  "resume",
  "Bring an ended session's conversation back in a new window, under its own id; a search hit's too",
);
