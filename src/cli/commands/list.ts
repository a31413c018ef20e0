import { defineCommand } from "citty";
import { SESSION_STATES, type Session } from "../../sessions/index.ts";
import { AgError } from "../../shared/errors.ts";
import { GLOBAL_ARGS } from "../args.ts";
import type { ApiClient } from "../client.ts";
import { connect } from "../connect.ts";
import { colourEnabled, printJson, printLine, printNote, printTable } from "../output.ts";
import { SESSION_HEADERS, type SessionCost, sessionRows, withHostColumn } from "../views.ts";

const STATUSES = [...SESSION_STATES, "running"] as const;

interface MetricsBySession {
  bySession: Array<{ id: string; tokens: SessionCost["tokens"]; estimatedCost: { usd: number } }>;
}

/**
 * Tokens and cost of each session from GET /v1/metrics. A key that may not see server-wide
 * metrics (a tenant's) still gets its list: the sessions' own token counts, and no cost.
 */
async function sessionCosts(client: ApiClient): Promise<Map<string, SessionCost>> {
  const metrics = await client.get<MetricsBySession>("/v1/metrics").catch(() => null);
  return new Map(
    (metrics?.bySession ?? []).map((s) => [s.id, { tokens: s.tokens, usd: s.estimatedCost.usd }] as const),
  );
}

/** `ag list`: the running sessions, newest first, with what each waits for and what it cost. */
export default defineCommand({
  meta: { name: "list", description: "List running sessions (--all: ended ones too), newest first" },
  args: {
    ...GLOBAL_ARGS,
    all: { type: "boolean", description: "Ended sessions too (they stay listed for 24 h)" },
    status: {
      type: "string",
      description: `Only sessions in this state: ${STATUSES.join(", ")} (running = any live state)`,
      valueHint: "state",
    },
    host: {
      type: "string",
      description: "In a fleet: only the sessions of this host (ag fleet lists the hosts)",
      valueHint: "name",
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
    const status = args.status ?? (args.all ? undefined : "running");
    const params = new URLSearchParams({
      ...(status ? { status } : {}),
      ...(args.host ? { host: args.host } : {}),
    }).toString();
    const query = params ? `?${params}` : "";
    const [sessions, costs] = await Promise.all([
      client.get<Session[]>(`/v1/sessions${query}`),
      args.json ? new Map<string, SessionCost>() : sessionCosts(client),
    ]);
    if (args.json) return printJson(sessions);
    if (sessions.length === 0) {
      printLine(status ? `no ${status} sessions` : "no sessions");
      if (status === "running" && !args.status) printNote("ended sessions: ag list --all");
      return;
    }
    const rows = sessionRows(sessions, Date.now(), colourEnabled(), costs);
    if (!sessions.some((s) => s.host !== undefined)) return printTable(SESSION_HEADERS, rows);
    printTable(...withHostColumn(SESSION_HEADERS, rows, sessions));
  },
});
