/** The API's own types, read from the server's schemas (types only: nothing of the server is bundled). */
export type { AuditRecord } from "../../src/audit/record.ts";
export type { ApiKey } from "../../src/auth/key.ts";
export type { ChannelHealth } from "../../src/channels/dispatcher.ts";
export type { DeadLetter } from "../../src/channels/store.ts";
export type {
  Consensus,
  CriterionVerdict,
  ReviewedChange,
  Reviewer,
} from "../../src/consensus/consensus.ts";
export type { AgEvent } from "../../src/events/bus.ts";
export type { Health } from "../../src/health/service.ts";
export type { MemoryEntry } from "../../src/memory/entry.ts";
export type { MetricsReport } from "../../src/metrics/report.ts";
export type { Pipeline } from "../../src/pipelines/pipeline.ts";
export type { SearchHit, SearchResult } from "../../src/search/search.ts";
export type { PendingPermission, Session, SessionStatus } from "../../src/sessions/session.ts";
export type { TranscriptCursorPage, TranscriptMessage } from "../../src/transcript/cursor.ts";

import type { MetricsReport } from "../../src/metrics/report.ts";
/** One running session's agent process tree, as GET /v1/metrics `agents.bySession` has it. */
export type AgentUsage = MetricsReport["agents"]["bySession"][number];

/** A session's tokens and estimated cost, read together (GET /v1/metrics `bySession`, or the session's own metrics). */
export interface SessionUsage {
  tokens: MetricsReport["bySession"][number]["tokens"];
  usd: number;
}
