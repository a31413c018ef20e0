import type { Static } from "@sinclair/typebox";
import type { AgentRegistry } from "../agents/registry.ts";
import type { AgentProcess, SessionRepo } from "../sessions/index.ts";
import { estimateCost, type Price, type PriceTable, sumTokens, transcriptOwner } from "../sessions/index.ts";
import type { Clock } from "../shared/clock.ts";
import type { Logger } from "../shared/log.ts";
import type { TenantUsers } from "../shared/run-as.ts";
import { tracingStats } from "../telemetry/index.ts";
import { toFamilies } from "./exposition.ts";
import { createTokenLedger } from "./ledger.ts";
import { renderPrometheus } from "./prometheus.ts";
import type { MetricsRecorder } from "./recorder.ts";
import type { MetricsReport } from "./report.ts";

export interface MetricsServiceDeps {
  /** Sessions by state, and where their transcripts are. */
  repo: Pick<SessionRepo, "list" | "stats">;
  agents: Pick<AgentRegistry, "get">;
  /** A tenant's runAs user: its sessions' transcripts must be that user's files. */
  owners?: TenantUsers;
  /** The totals the live sessions report to (also given to the session service). */
  recorder: MetricsRecorder;
  clock: Clock;
  logger: Logger;
  prices: PriceTable;
  /** What a model with no price costs (budgets.defaultPrice): flagged in `unpriced`, never free. */
  defaultPrice?: Price;
  /** Budgets and their spend (the budgets domain); absent: no budget metrics. */
  budgets?: () => NonNullable<MetricsReport["budgets"]>;
  version: string;
  /** Epoch ms. */
  startedAt: number;
  /** What each running session's agent costs now, and what the host has left (bytes). */
  host?: {
    agentProcesses(): Promise<Map<string, Static<typeof AgentProcess>>>;
    available(): Promise<number | null>;
  };
}

export interface MetricsService {
  /** `GET /v1/metrics`. */
  report(): Promise<MetricsReport>;
  /** `GET /metrics`: the same numbers in the Prometheus text format, latencies as histograms. */
  prometheus(): Promise<string>;
}

export function createMetricsService(deps: MetricsServiceDeps): MetricsService {
  const ledger = createTokenLedger(deps);

  async function report(): Promise<MetricsReport> {
    const records = deps.repo.list();
    await ledger.refresh(
      records.flatMap((r) =>
        r.transcriptPath
          ? [
              {
                path: r.transcriptPath,
                agent: r.agent,
                agentVersion: r.agentVersion,
                owner: transcriptOwner(r, deps.owners),
                driver: r.driver,
              },
            ]
          : [],
      ),
    );
    const { tokens, tokensByModel, byTranscript } = ledger.snapshot();
    const stats = deps.repo.stats();
    const [processes, hostAvailableBytes] = deps.host
      ? await Promise.all([deps.host.agentProcesses(), deps.host.available()])
      : [new Map<string, Static<typeof AgentProcess>>(), null];
    const agentOf = new Map(records.map((r) => [r.id, r.agent]));
    const { recorder } = deps;
    return {
      version: deps.version,
      startedAt: new Date(deps.startedAt).toISOString(),
      uptimeSeconds: Math.max(0, (deps.clock.now() - deps.startedAt) / 1000),
      sessions: { total: stats.total, active: stats.active, byState: stats.byStatus },
      tokens,
      tokensByModel,
      estimatedCost: estimateCost(tokensByModel, deps.prices, deps.defaultPrice),
      bySession: records.flatMap((r) => {
        const byModel = r.transcriptPath ? byTranscript[r.transcriptPath] : undefined;
        if (!byModel) return [];
        return [
          {
            id: r.id,
            tokens: sumTokens(Object.values(byModel)),
            estimatedCost: estimateCost(byModel, deps.prices, deps.defaultPrice),
          },
        ];
      }),
      agents: {
        rssBytes: [...processes.values()].reduce((sum, p) => sum + p.rssBytes, 0),
        hostAvailableBytes,
        bySession: [...processes].map(([id, p]) => ({ id, agent: agentOf.get(id) ?? "unknown", ...p })),
      },
      prompts: recorder.prompts(),
      latency: {
        deliveryMs: recorder.deliveryLatency.recent(),
        stateDetectionMs: recorder.detectionLatency.recent(),
      },
      tracing: tracingStats(),
      ...(deps.budgets ? { budgets: deps.budgets() } : {}),
    };
  }

  return {
    report,
    async prometheus() {
      const families = toFamilies(await report(), {
        delivery: deps.recorder.deliveryLatency.sample(),
        detection: deps.recorder.detectionLatency.sample(),
      });
      return renderPrometheus(families);
    },
  };
}
