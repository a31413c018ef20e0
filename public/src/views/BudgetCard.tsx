import { useSignal } from "@preact/signals";
import { useEffect } from "preact/hooks";
import { api, describe } from "../api.ts";
import { formatCost } from "../format.ts";
import type { Session } from "../types.ts";

type Budget = NonNullable<Session["budget"]>;
interface Turn {
  at: string;
  usd: number;
  tokens: number;
}

/**
 * A session's budget (docs/budgets.md): cap and spend, spend by turn, and the controls that set,
 * raise or clear the cap — or stop here, leaving a paused session paused. A link from a
 * budget.reached notification lands on the session's page, where this card comes first.
 */
export function BudgetCard({ session, onDone }: { session: Session; onDone(): Promise<void> }) {
  const budget = session.budget as Budget;
  const path = `/v1/sessions/${encodeURIComponent(session.id)}/budget`;
  const amount = useSignal(budget.usd === null ? "" : String(budget.usd));
  const turns = useSignal<Turn[]>([]);
  const result = useSignal<{ ok: boolean; text: string } | null>(null);
  const busy = useSignal(false);

  useEffect(() => {
    api<{ turns: Turn[] }>(path)
      .then((answer) => {
        turns.value = answer.turns;
      })
      .catch(() => {});
  }, [session.id, budget.spentUsd]);

  async function act(label: string, route: string, body?: unknown) {
    busy.value = true;
    try {
      await api(`${path}${route}`, { method: "POST", body });
      result.value = { ok: true, text: `${label}: done` };
    } catch (e) {
      result.value = { ok: false, text: `${label}: ${describe(e)}` };
    } finally {
      busy.value = false;
      void onDone();
    }
  }

  const paused = budget.state === "reached";
  const cap = budget.usd === null ? "no cap" : formatCost(budget.usd);
  return (
    <section class={paused ? "budget-card pending-card" : "budget-card"} aria-label="Budget">
      <h3>{paused ? `Paused: ${budget.reachedBy} budget reached` : "Budget"}</h3>
      <p>
        {formatCost(budget.spentUsd)} of {cap}
        {budget.state === "warning" && " — past the warning share"}
        {budget.heldPrompt && " · a prompt is held, delivered once when raised"}
        {budget.unpriced.length > 0 && ` · priced by the default price: ${budget.unpriced.join(", ")}`}
      </p>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          const usd = Number(amount.value);
          if (amount.value.trim() !== "" && Number.isFinite(usd) && usd >= 0) void act("Set", "", { usd });
        }}
      >
        <label>
          Cap in USD{" "}
          <input
            type="number"
            min="0"
            step="0.01"
            value={amount.value}
            onInput={(e) => {
              amount.value = (e.target as HTMLInputElement).value;
            }}
          />
        </label>
        <button type="submit" disabled={busy.value}>
          Set
        </button>
        <button type="button" disabled={busy.value} onClick={() => void act("Clear", "", { usd: null })}>
          Clear
        </button>
        {paused && (
          <button type="button" disabled={busy.value} onClick={() => void act("Stop here", "/stop")}>
            Stop here
          </button>
        )}
      </form>
      {turns.value.length > 0 && (
        <details>
          <summary>Spend by turn ({turns.value.length})</summary>
          <ol class="budget-turns">
            {turns.value.map((t) => (
              <li key={t.at}>
                {new Date(t.at).toLocaleTimeString()} — {formatCost(t.usd)}, {t.tokens} tokens
              </li>
            ))}
          </ol>
        </details>
      )}
      {result.value && (
        <p class={result.value.ok ? "notice" : "error"} role="status">
          {result.value.text}
        </p>
      )}
    </section>
  );
}
