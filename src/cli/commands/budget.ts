import { defineCommand } from "citty";
import type { SessionBudget } from "../../sessions/index.ts";
import { AgError } from "../../shared/errors.ts";
import { GLOBAL_ARGS, SESSION_ARG } from "../args.ts";
import { connect } from "../connect.ts";
import { printFields, printJson, printNote } from "../output.ts";
import { resolveSession, sessionPath } from "../resolve.ts";
import { budgetCell, formatUsd } from "../views.ts";

/** `--usd 2.5`: a dollar amount from 0. */
export function parseUsd(value: string): number {
  const usd = Number(value);
  if (!/^\d+(\.\d+)?$/.test(value) || !Number.isFinite(usd))
    throw new AgError("USAGE_ERROR", `--usd expects an amount in US dollars, e.g. 2.5, got "${value}"`);
  return usd;
}

/**
 * `ag budget <session>`: shows the session's budget; `--usd N` sets (raises) it, `--clear` clears
 * it, `--stop` keeps a paused session paused and drops its held prompt (docs/budgets.md).
 */
export default defineCommand({
  meta: {
    name: "budget",
    description: "Show, raise (--usd N), clear (--clear) or stop (--stop) a session's budget",
  },
  args: {
    ...GLOBAL_ARGS,
    session: SESSION_ARG,
    usd: {
      type: "string",
      description: "Set the session's cap to this many US dollars",
      valueHint: "amount",
    },
    clear: { type: "boolean", description: "Clear the session's own cap" },
    stop: { type: "boolean", description: "Stop here: stay paused, drop the held prompt" },
    json: { type: "boolean", description: "Machine-readable output: the session's budget" },
  },
  async run({ args }) {
    const actions = [args.usd !== undefined, args.clear, args.stop].filter(Boolean).length;
    if (actions > 1) throw new AgError("USAGE_ERROR", "give one of --usd, --clear and --stop");
    const usd = args.usd === undefined ? undefined : parseUsd(args.usd);
    const { client } = connect(args);
    const session = await resolveSession(client, args.session);
    const path = sessionPath(session.id, "budget");
    const budget = args.stop
      ? await client.send<SessionBudget>("POST", `${path}/stop`)
      : usd !== undefined || args.clear
        ? await client.send<SessionBudget>("POST", path, { usd: args.clear ? null : usd })
        : ((await client.get<{ budget: SessionBudget | null }>(path)).budget ?? null);
    if (args.json) return printJson(budget);
    if (!budget) return printNote(`${session.name}: no spend counted yet, no budget`);
    printFields([
      ["session", `${session.name} (${session.id.slice(0, 8)})`],
      ["budget", budgetCell(budget)],
      ["spent", `${formatUsd(budget.spentUsd)}, ${budget.spentTokens} tokens`],
      ["state", budget.state === "reached" ? `reached (${budget.reachedBy}): paused` : budget.state],
      ["held prompt", budget.heldPrompt ? "yes: delivered once the budget is raised" : "none"],
      ...(budget.unpriced.length
        ? [["unpriced", `${budget.unpriced.join(", ")} (priced by budgets.defaultPrice)`] as const]
        : []),
    ]);
  },
});
