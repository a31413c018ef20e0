import { defineCommand } from "citty";
import type { Config } from "../config/schema.ts";
import { sessionVerbArgs } from "./args.ts";
import type { ApiClient } from "./client.ts";
import { type Connection, connect } from "./connect.ts";
import { printJson } from "./output.ts";

/** What a session verb answers: the value `--json` prints, and how a person is told instead. */
export interface VerbAnswer {
  json: unknown;
  print(): void;
}

/**
 * A verb on one session (`ag kill <session>`, `ag approve <session>`, …): the global flags, the
 * `<session>` and `--json`; it connects, acts on the session named `given` (not yet resolved:
 * each verb picks the lookup it needs), and prints the answer as JSON or for a person.
 */
export function sessionVerb(verb: {
  name: string;
  description: string;
  /** What `--json` prints, for the help. */
  json: string;
  /** How long a request may take, when longer than the client's default (the verb starts an agent). */
  timeoutMs?: (config: Config) => number;
  act(client: ApiClient, given: string, connection: Connection): Promise<VerbAnswer>;
}) {
  return defineCommand({
    meta: { name: verb.name, description: verb.description },
    args: sessionVerbArgs(verb.json),
    async run({ args }) {
      const connection = connect(args, { timeoutMs: verb.timeoutMs });
      const answer = await verb.act(connection.client, args.session, connection);
      if (args.json) printJson(answer.json);
      else answer.print();
    },
  });
}
