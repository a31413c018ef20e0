import { type Static, Type } from "@sinclair/typebox";
import { AgentProcess, Percentiles, SessionMetrics } from "../sessions/index.ts";

const Tokens = SessionMetrics.properties.tokens;

const Latency = Type.Object(Percentiles.properties, {
  description: "milliseconds: count since ag started, p50/p90/max over the last 1000 samples",
});

/** `GET /v1/metrics`: the whole server, across sessions. */
export const MetricsReport = Type.Object({
  version: Type.String(),
  startedAt: Type.String({ format: "date-time" }),
  uptimeSeconds: Type.Number(),
  sessions: Type.Object({
    total: Type.Integer(),
    active: Type.Integer({ description: "sessions in a live state" }),
    byState: Type.Record(Type.String(), Type.Integer(), { description: "every state, 0 included" }),
  }),
  tokens: Type.Object(Tokens.properties, {
    description: "across every stored session's transcript, each agent message counted once by its id",
  }),
  tokensByModel: Type.Record(Type.String(), Tokens),
  estimatedCost: SessionMetrics.properties.estimatedCost,
  bySession: Type.Array(
    Type.Object({
      id: Type.String(),
      tokens: Tokens,
      estimatedCost: SessionMetrics.properties.estimatedCost,
    }),
    { description: "each stored session with a transcript: its own conversation's tokens and cost" },
  ),
  agents: Type.Object(
    {
      rssBytes: Type.Integer({ description: "every running session's agent, together" }),
      hostAvailableBytes: Type.Union([Type.Integer(), Type.Null()], {
        description: "what the host can still give (MemAvailable, or less under ag's cgroup limit)",
      }),
      bySession: Type.Array(
        Type.Composite([Type.Object({ id: Type.String(), agent: Type.String() }), AgentProcess]),
        { description: "each running session's agent process tree" },
      ),
    },
    { description: "what the agents cost the host now (Linux /proc; empty elsewhere)" },
  ),
  prompts: Type.Object(
    {
      sent: Type.Integer({ description: "deliveries attempted" }),
      delivered: Type.Integer({ description: "confirmed by the agent" }),
      failed: Type.Integer({ description: "not confirmed after every attempt" }),
      attempts: Type.Integer({ description: "pastes, retries included" }),
    },
    { description: "since ag started" },
  ),
  latency: Type.Object({
    deliveryMs: Latency,
    stateDetectionMs: Latency,
  }),
  tracing: Type.Union(
    [
      Type.Object({
        exported: Type.Integer({ description: "spans the collector took" }),
        failed: Type.Integer({
          description: "spans of exports that failed (collector down, refused, timed out)",
        }),
        dropped: Type.Integer({ description: "spans dropped because the bounded queue was full" }),
      }),
      Type.Null(),
    ],
    { description: "OpenTelemetry export since ag started; null when tracing is off" },
  ),
  budgets: Type.Optional(
    Type.Object(
      {
        scopes: Type.Array(
          Type.Object({
            budget: Type.String(),
            usd: Type.Union([Type.Number(), Type.Null()]),
            spentUsd: Type.Number(),
          }),
        ),
        sessions: Type.Array(
          Type.Object({
            id: Type.String(),
            usd: Type.Union([Type.Number(), Type.Null()]),
            spentUsd: Type.Number(),
            state: Type.String(),
          }),
        ),
      },
      { description: "server, tenant and session budgets (docs/budgets.md)" },
    ),
  ),
});
export type MetricsReport = Static<typeof MetricsReport>;
