/**
 * Pure budget arithmetic: which budgets apply to a session, how far each is spent, and what its
 * state becomes. No clock, no store: the service hands in what it counted.
 */

export type BudgetState = "ok" | "warning" | "reached";

/** One budget as it stands: its name (`session`, `tenant:acme:month`, `server:day`…), cap and spend. */
export interface Cap {
  budget: string;
  /** Cap in US dollars; null: none. */
  usd: number | null;
  spentUsd: number;
  /** Cap in tokens (session budgets only); null or absent: none. */
  tokens?: number | null;
  spentTokens?: number;
}

/** How far a budget is spent, 0…(above 1); 0 without a cap. A zero cap is spent at once. */
export function shareOf(cap: Cap): number {
  const shares = [ratio(cap.spentUsd, cap.usd), ratio(cap.spentTokens ?? 0, cap.tokens ?? null)];
  return Math.max(...shares);
}

function ratio(spent: number, limit: number | null): number {
  if (limit === null) return 0;
  if (limit === 0) return Number.POSITIVE_INFINITY;
  return spent / limit;
}

export interface Standing {
  state: BudgetState;
  /** The budget that decides the state: the first reached, else the most spent (null: none set). */
  by: Cap | null;
}

/** A session's state over every budget that applies to it. */
export function standing(caps: readonly Cap[], warnAt: number): Standing {
  const set = caps.filter((c) => c.usd !== null || (c.tokens ?? null) !== null);
  if (set.length === 0) return { state: "ok", by: null };
  const reached = set.find((c) => shareOf(c) >= 1);
  if (reached) return { state: "reached", by: reached };
  const most = set.reduce((a, b) => (shareOf(b) > shareOf(a) ? b : a));
  return { state: shareOf(most) >= warnAt ? "warning" : "ok", by: most };
}

/** The event a change of state publishes (null: nothing to say). */
export function transition(
  previous: BudgetState,
  next: BudgetState,
): "budget.warning" | "budget.reached" | "budget.raised" | null {
  if (previous === next) return null;
  if (next === "reached") return "budget.reached";
  if (previous === "reached") return "budget.raised";
  return next === "warning" ? "budget.warning" : null;
}

/** The start of the UTC day and month `now` falls in (ISO), where day and month budgets count from. */
export function windowsOf(now: number): { day: string; month: string } {
  const date = new Date(now);
  const day = Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), date.getUTCDate());
  const month = Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), 1);
  return { day: new Date(day).toISOString(), month: new Date(month).toISOString() };
}

/** "$0.0123": dollars with enough digits that a small spend is not shown as nothing. */
export function usd(value: number): string {
  const digits = value >= 1 ? 2 : value >= 0.0001 || value === 0 ? 4 : 6;
  return `$${value.toFixed(digits)}`;
}

/** What a refusal or an event says of a budget: "session budget $0.0100 ($0.0123 spent)". */
export function describeCap(cap: Cap): string {
  const limit =
    cap.usd !== null
      ? usd(cap.usd)
      : cap.tokens !== null && cap.tokens !== undefined
        ? `${cap.tokens} tokens`
        : "none";
  const spent = cap.usd === null && cap.tokens != null ? `${cap.spentTokens ?? 0} tokens` : usd(cap.spentUsd);
  return `${cap.budget} budget ${limit} (${spent} spent)`;
}

/** Dollars to the millionth, as ag counts them (no float dust in sums and comparisons). */
export function round(value: number): number {
  return Math.round(value * 1_000_000) / 1_000_000;
}
