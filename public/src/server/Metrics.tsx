import { formatCost, formatTokens } from "../format.ts";
import { sessionHref } from "../router.ts";
import { sessions } from "../store.ts";
import type { MetricsReport } from "../types.ts";
import { Failure } from "./ServerView.tsx";
import { useLoad } from "./use-load.ts";

const sum = (t: MetricsReport["tokens"]) => t.input + t.output + t.cacheRead + t.cacheCreation;

/** Tokens and cost, in total and per session, and the delivery and detection figures. */
export function Metrics() {
  const { data, error, reload } = useLoad<MetricsReport>("/v1/metrics");
  const m = data.value;
  const names = Object.fromEntries(sessions.value.map((s) => [s.id, s.name]));
  return (
    <div id="metrics">
      <Failure text={error.value} />
      <button type="button" onClick={reload}>
        Reload
      </button>
      {m && (
        <>
          <dl class="facts">
            <dt>Sessions</dt>
            <dd>
              {m.sessions.active} active / {m.sessions.total} total
            </dd>
            <dt>Tokens</dt>
            <dd data-field="tokens">{formatTokens(sum(m.tokens))}</dd>
            <dt>Estimated cost</dt>
            <dd data-field="cost">{formatCost(m.estimatedCost.usd)}</dd>
            <dt>Prompts</dt>
            <dd>
              {m.prompts.delivered} delivered / {m.prompts.sent} sent ({m.prompts.failed} failed)
            </dd>
            <dt>Delivery p50 / p90</dt>
            <dd>
              {m.latency.deliveryMs.p50 ?? "–"} / {m.latency.deliveryMs.p90 ?? "–"} ms
            </dd>
          </dl>
          {m.estimatedCost.unpriced.length > 0 && (
            <p class="muted">Not priced: {m.estimatedCost.unpriced.join(", ")}</p>
          )}
          <table class="data" id="cost-by-session">
            <thead>
              <tr>
                <th scope="col">Session</th>
                <th scope="col">Input</th>
                <th scope="col">Output</th>
                <th scope="col">Cache read</th>
                <th scope="col">Cost</th>
              </tr>
            </thead>
            <tbody>
              {m.bySession.map((s) => (
                <tr key={s.id}>
                  <td>
                    <a href={sessionHref(s.id)}>{names[s.id] ?? s.id.slice(0, 8)}</a>
                  </td>
                  <td>{formatTokens(s.tokens.input)}</td>
                  <td>{formatTokens(s.tokens.output)}</td>
                  <td>{formatTokens(s.tokens.cacheRead)}</td>
                  <td>{formatCost(s.estimatedCost.usd)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </>
      )}
    </div>
  );
}
