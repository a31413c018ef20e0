import type { BudgetSettings } from "../config/schema.ts";
import type { Clock } from "../shared/clock.ts";
import type { ScopeBudget } from "./budget.ts";
import type { BudgetRepo, BudgetRow } from "./repo.ts";
import { type Cap, round, shareOf, windowsOf } from "./state.ts";

/**
 * The budgets beyond a session's own — `server:day|month`, `tenant:<id>:day|month` — as they stand
 * now: each cap (set over the API, else the config's) and what was spent in its UTC day or month.
 */
export function createScopes(deps: {
  repo: Pick<BudgetRepo, "override" | "spentSince">;
  settings: BudgetSettings;
  clock: Clock;
}) {
  const { repo, settings } = deps;

  /** `tenant:acme:month` → its kind, tenant (null: the server's) and period. */
  function parse(scope: string): { tenant: string | null; period: "day" | "month" } {
    const [kind, ...rest] = scope.split(":");
    const period = rest.at(-1) as "day" | "month";
    return { tenant: kind === "tenant" ? rest.slice(0, -1).join(":") : null, period };
  }

  /** A server or tenant cap: the one set over the API, else the config's (null: none). */
  function cap(scope: string): number | null {
    const set = repo.override(scope);
    if (set !== undefined) return set;
    const { tenant, period } = parse(scope);
    const field = period === "day" ? "dayUsd" : "monthUsd";
    if (tenant === null) return settings[field] ?? null;
    return settings.tenants?.[tenant]?.[field] ?? null;
  }

  function budget(scope: string): ScopeBudget {
    const { tenant, period } = parse(scope);
    const usd = cap(scope);
    const spentUsd = round(repo.spentSince(windowsOf(deps.clock.now())[period], tenant));
    return {
      budget: scope,
      usd,
      spentUsd,
      share: usd === null ? 0 : shareOf({ budget: scope, usd, spentUsd }),
    };
  }

  return {
    cap,
    budget,
    /** The tenant a scope covers (`*`: every session, the server's). */
    tenantOf: (scope: string): string => parse(scope).tenant ?? "*",
    /** Every budget that applies to a session: its own, its tenant's, the server's (those with a cap). */
    capsOf(row: BudgetRow): Cap[] {
      const scopes = ["server:day", "server:month"];
      if (row.tenantId) scopes.push(`tenant:${row.tenantId}:day`, `tenant:${row.tenantId}:month`);
      const own: Cap = {
        budget: "session",
        usd: row.usd,
        spentUsd: row.spentUsd,
        tokens: row.tokens,
        spentTokens: row.spentTokens,
      };
      return [own, ...scopes.map(budget).filter((s) => s.usd !== null)];
    },
    hasServerCap: () => cap("server:day") !== null || cap("server:month") !== null,
    /** The scopes worth listing: the server's, and those of the tenants named in the config or seen. */
    listed(tenants: Iterable<string>): ScopeBudget[] {
      const scopes = new Set(["server:day", "server:month"]);
      for (const tenant of [...Object.keys(settings.tenants ?? {}), ...tenants])
        for (const period of ["day", "month"]) scopes.add(`tenant:${tenant}:${period}`);
      return [...scopes].map(budget);
    },
  };
}

export type Scopes = ReturnType<typeof createScopes>;
