import { Elysia } from "elysia";
import { principalOf } from "../../auth/principal.ts";
import {
  BudgetOverview,
  type BudgetService,
  ScopeBudget,
  ScopeBudgetInput,
  ScopeParams,
  SessionBudgetDetail,
} from "../../budgets/index.ts";
import { BudgetInput, SessionBudget, type SessionService } from "../../sessions/index.ts";
import { IdParams } from "./params.ts";

const tags = ["budgets"];

/** Budgets (docs/budgets.md): what sessions, tenants and the server may spend; raise, clear, stop. */
export function budgetRoutes(budgets: BudgetService, sessions: Pick<SessionService, "get" | "sees">) {
  return new Elysia({ name: "routes/budgets" })
    .get(
      "/v1/budgets",
      ({ request }) => {
        const principal = principalOf(request);
        const all = budgets.overview();
        return { ...all, sessions: all.sessions.filter((s) => sessions.sees(principal, s.id)) };
      },
      {
        response: BudgetOverview,
        detail: { summary: "Every budget: the server's and tenants' (day, month) and each session's", tags },
      },
    )
    .put("/v1/budgets/:scope", ({ params, body }) => budgets.setScope(params.scope, body.usd), {
      params: ScopeParams,
      body: ScopeBudgetInput,
      response: ScopeBudget,
      detail: {
        summary:
          "Set a server or tenant budget (server:day, tenant:<id>:month…) over the config's; null: none",
        tags,
      },
    })
    .get(
      "/v1/sessions/:id/budget",
      ({ params }) => ({
        id: params.id,
        budget: sessions.get(params.id).budget ?? null,
        turns: budgets.turns(params.id),
      }),
      {
        params: IdParams,
        response: SessionBudgetDetail,
        detail: { summary: "A session's budget and its spend turn by turn", tags },
      },
    )
    .post("/v1/sessions/:id/budget", ({ params, body }) => budgets.raise(params.id, body), {
      params: IdParams,
      body: BudgetInput,
      response: SessionBudget,
      detail: {
        summary: "Raise, lower or clear ({usd: null}) a session's budget",
        description:
          "A session paused by its budget takes prompts again once no budget of it is reached, and gets the prompt it refused while paused (held), once.",
        tags,
      },
    })
    .post("/v1/sessions/:id/budget/stop", ({ params }) => budgets.stop(params.id), {
      params: IdParams,
      response: SessionBudget,
      detail: { summary: "Stop here: the session stays paused and its held prompt is dropped", tags },
    });
}
