import { type Static, Type } from "@sinclair/typebox";
import { SessionBudget } from "../sessions/index.ts";

/** Server and tenant budgets: `server:day`, `server:month`, `tenant:<id>:day`, `tenant:<id>:month`. */
export const SCOPE_PATTERN = "^(server|tenant:[^:]{1,128}):(day|month)$";

/** A server or tenant budget, and what was spent against it in its day or month (UTC). */
export const ScopeBudget = Type.Object({
  budget: Type.String({ description: "server:day, server:month, tenant:<id>:day, tenant:<id>:month" }),
  usd: Type.Union([Type.Number(), Type.Null()], { description: "the cap (null: none)" }),
  spentUsd: Type.Number({ description: "spent since the day's or month's start (UTC)" }),
  share: Type.Number({ description: "spent / cap (0 without a cap)" }),
});
export type ScopeBudget = Static<typeof ScopeBudget>;

export const ScopeParams = Type.Object({
  scope: Type.String({ pattern: SCOPE_PATTERN, description: "server:day|month or tenant:<id>:day|month" }),
});
export const ScopeBudgetInput = Type.Object(
  {
    usd: Type.Union([Type.Number({ minimum: 0, maximum: 10_000_000 }), Type.Null()], {
      description: "the cap in US dollars; null: none (not even the config's)",
    }),
  },
  { additionalProperties: false },
);

export const BudgetOverview = Type.Object({
  warnAt: Type.Number({ description: "the share of a budget at which budget.warning is sent" }),
  interruptAtCap: Type.Boolean({ description: "a turn is interrupted at the cap instead of let finish" }),
  scopes: Type.Array(ScopeBudget),
  sessions: Type.Array(
    Type.Composite([
      Type.Object({
        id: Type.String(),
        name: Type.String(),
        tenantId: Type.Union([Type.String(), Type.Null()]),
      }),
      SessionBudget,
    ]),
  ),
});
export type BudgetOverview = Static<typeof BudgetOverview>;

export const SessionBudgetDetail = Type.Object({
  id: Type.String(),
  budget: Type.Union([SessionBudget, Type.Null()]),
  turns: Type.Array(
    Type.Object({
      at: Type.String({ format: "date-time", description: "when the turn's spend was counted" }),
      usd: Type.Number(),
      tokens: Type.Integer(),
    }),
    { description: "spend by turn, oldest first" },
  ),
});
