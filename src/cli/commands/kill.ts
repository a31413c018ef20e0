import type { Session } from "../../sessions/index.ts";
import { printLine } from "../output.ts";
import { resolveSessionId, sessionPath } from "../resolve.ts";
import { sessionVerb } from "../session-verb.ts";

/** `ag kill <session>`: DELETE /v1/sessions/:id — the agent's window closes. */
export default sessionVerb({
  name: "kill",
  description: "Kill a session (its agent window closes)",
  json: "Machine-readable output",
  async act(client, given) {
    const session = await client.send<Session>("DELETE", sessionPath(await resolveSessionId(client, given)));
    return { json: session, print: () => printLine(`killed ${session.id} (${session.name})`) };
  },
});
