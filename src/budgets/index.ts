export {
  BudgetOverview,
  SCOPE_PATTERN,
  ScopeBudget,
  ScopeBudgetInput,
  ScopeParams,
  SessionBudgetDetail,
} from "./budget.ts";
export { guardSessions } from "./guard.ts";
export { type BudgetRepo, createBudgetRepo } from "./repo.ts";
export { type BudgetService, createBudgetService } from "./service.ts";
export {
  type BudgetState,
  type Cap,
  describeCap,
  shareOf,
  standing,
  transition,
  windowsOf,
} from "./state.ts";
