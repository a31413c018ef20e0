import { defineCommand } from "citty";
import { SESSION_STATES, type Session } from "../../sessions/index.ts";
import { AgError } from "../../shared/errors.ts";
import { GLOBAL_ARGS } from "../args.ts";
import { connect } from "../connect.ts";
import { colourEnabled, printJson, printLine, printTable } from "../output.ts";
import { SESSION_HEADERS, sessionRows } from "../views.ts";

const STATUSES = [...SESSION_STATES, "running"] as const;

/** `ag list`: the sessions, newest first (GET /v1/sessions). */
export default defineCommand({
  meta: { name: "list", description: "List sessions, newest first" },
  args: {
    ...GLOBAL_ARGS,
    status: {
      type: "string",
      description: `Only sessions in this state: ${STATUSES.join(", ")} (running = any live state)`,
      valueHint: "state",
    },
    json: { type: "boolean", description: "Machine-readable output" },
  },
  async run({ args }) {
    if (args.status !== undefined && !(STATUSES as readonly string[]).includes(args.status)) {
      throw new AgError(
        "USAGE_ERROR",
        `--status expects one of ${STATUSES.join(", ")}, got "${args.status}"`,
      );
    }
    const { client } = connect(args);
    const query = args.status ? `?status=${encodeURIComponent(args.status)}` : "";
    const sessions = await client.get<Session[]>(`/v1/sessions${query}`);
    if (args.json) return printJson(sessions);
    if (sessions.length === 0) return printLine(args.status ? `no ${args.status} sessions` : "no sessions");
    printTable(SESSION_HEADERS, sessionRows(sessions, Date.now(), colourEnabled()));
  },
});
