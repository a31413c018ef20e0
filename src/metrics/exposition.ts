import type { HistogramSample, MetricFamily } from "./prometheus.ts";
import type { MetricsReport } from "./report.ts";

/** Token kinds as Prometheus label values (snake case, as label values usually are). */
const TOKEN_TYPES = [
  ["input", "input"],
  ["output", "output"],
  ["cacheRead", "cache_read"],
  ["cacheCreation", "cache_creation"],
] as const;

/**
 * ag's metrics as Prometheus families: the JSON report's numbers under `ag_` names, with the
 * latencies as histograms in seconds (docs/metrics.md lists them).
 */
export function toFamilies(
  report: MetricsReport,
  latency: { delivery: HistogramSample; detection: HistogramSample },
): MetricFamily[] {
  return [
    {
      name: "ag_info",
      help: "Always 1; the version of ag as a label",
      type: "gauge",
      samples: [{ labels: { version: report.version }, value: 1 }],
    },
    {
      name: "ag_start_time_seconds",
      help: "When ag started, in seconds since the Unix epoch",
      type: "gauge",
      samples: [{ value: Date.parse(report.startedAt) / 1000 }],
    },
    {
      name: "ag_uptime_seconds",
      help: "Seconds since ag started",
      type: "gauge",
      samples: [{ value: report.uptimeSeconds }],
    },
    {
      name: "ag_sessions",
      help: "Stored sessions by state",
      type: "gauge",
      samples: Object.entries(report.sessions.byState).map(([state, value]) => ({
        labels: { state },
        value,
      })),
    },
    {
      name: "ag_agent_rss_bytes",
      help: "Resident memory of a running session's agent and every process it started",
      type: "gauge",
      samples: report.agents.bySession.map((s) => ({
        labels: { session: s.id, agent: s.agent },
        value: s.rssBytes,
      })),
    },
    {
      name: "ag_agent_cpu_percent",
      help: "Share of one core a running session's agent process tree used since the last scrape",
      type: "gauge",
      samples: report.agents.bySession.flatMap((s) =>
        s.cpuPercent === null ? [] : [{ labels: { session: s.id, agent: s.agent }, value: s.cpuPercent }],
      ),
    },
    ...(report.agents.hostAvailableBytes === null
      ? []
      : [
          {
            name: "ag_host_memory_available_bytes",
            help: "Memory the host can still give (MemAvailable, or less under ag's cgroup limit)",
            type: "gauge" as const,
            samples: [{ value: report.agents.hostAvailableBytes }],
          },
        ]),
    {
      name: "ag_tokens_total",
      help: "Tokens across all sessions' transcripts, each agent message counted once by its id",
      type: "counter",
      samples: TOKEN_TYPES.map(([key, type]) => ({ labels: { type }, value: report.tokens[key] })),
    },
    {
      name: "ag_estimated_cost_usd",
      help: "Estimated cost of those tokens in US dollars, from the price table (pricing in config)",
      type: "gauge",
      samples: [{ value: report.estimatedCost.usd }],
    },
    {
      name: "ag_unpriced_models",
      help: "Models that used tokens but have no price of their own: priced by budgets.defaultPrice",
      type: "gauge",
      samples: [{ value: report.estimatedCost.unpriced.length }],
    },
    {
      name: "ag_prompts_total",
      help: "Prompt deliveries since ag started, by outcome (sent = delivered + failed)",
      type: "counter",
      samples: (["sent", "delivered", "failed"] as const).map((outcome) => ({
        labels: { outcome },
        value: report.prompts[outcome],
      })),
    },
    {
      name: "ag_prompt_delivery_attempts_total",
      help: "Pastes made to deliver prompts, retries included",
      type: "counter",
      samples: [{ value: report.prompts.attempts }],
    },
    {
      name: "ag_delivery_latency_seconds",
      help: "From pasting a prompt to the agent's confirmation that it took it",
      type: "histogram",
      samples: [latency.delivery],
    },
    {
      name: "ag_state_detection_latency_seconds",
      help: "From the first evidence of a new session state to its publication",
      type: "histogram",
      samples: [latency.detection],
    },
    ...budgetFamilies(report.budgets),
    ...(report.tracing
      ? [
          {
            name: "ag_tracing_spans_total",
            help: "Spans given to the OTLP exporter since ag started, by outcome (exported, failed, dropped from the full queue)",
            type: "counter" as const,
            samples: (["exported", "failed", "dropped"] as const).map((outcome) => ({
              labels: { outcome },
              value: report.tracing![outcome],
            })),
          },
        ]
      : []),
  ];
}

const BUDGET_STATES = ["ok", "warning", "reached"] as const;

/** Budgets (docs/budgets.md): caps and spend by budget, and sessions by budget state. */
function budgetFamilies(budgets: MetricsReport["budgets"]): MetricFamily[] {
  if (!budgets) return [];
  const all = [
    ...budgets.scopes,
    ...budgets.sessions.map((s) => ({ budget: `session:${s.id}`, usd: s.usd, spentUsd: s.spentUsd })),
  ];
  return [
    {
      name: "ag_budget_spent_usd",
      help: "What was spent against a budget (server and tenant: in its UTC day or month), US dollars",
      type: "gauge",
      samples: all.map((b) => ({ labels: { budget: b.budget }, value: b.spentUsd })),
    },
    {
      name: "ag_budget_limit_usd",
      help: "A budget's cap in US dollars (budgets without one are left out)",
      type: "gauge",
      samples: all.flatMap((b) => (b.usd === null ? [] : [{ labels: { budget: b.budget }, value: b.usd }])),
    },
    {
      name: "ag_budget_sessions",
      help: "Sessions ag counts spend of, by budget state (reached: paused)",
      type: "gauge",
      samples: BUDGET_STATES.map((state) => ({
        labels: { state },
        value: budgets.sessions.filter((s) => s.state === state).length,
      })),
    },
  ];
}
