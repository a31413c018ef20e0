/**
 * The sessions domain's public face: everything outside sessions/ imports from here.
 * (tests/unit/architecture.test.ts keeps it so.)
 */

export { assertTerminal, transcriptOwner, transcriptSource } from "../drivers/driver.ts";
export type { Observation, ObservationSource } from "../drivers/observation.ts";
export { DEFAULT_DELIVERY, type DeliveryOptions, type DeliveryResult } from "../drivers/tmux/delivery.ts";
export { normalizeText, type SendResult } from "./actions.ts";
export type { BatchResult, ConversationToFork, CreateOptions, CreateResult } from "./creation.ts";
export type {
  AdmissionHold,
  MemoryReader,
  SessionDefaults,
  SessionServiceDeps,
  TemplateReader,
} from "./deps.ts";
export { HOOK_SECRET_HEADER, type HookReceiver } from "./feed/hooks.ts";
export type { Supervisor } from "./feed/supervisor.ts";
export {
  AgentProcess,
  type HintAudience,
  hintsFor,
  Percentiles,
  percentiles,
  SessionHealth,
  SessionLatency,
  SessionMetrics,
  SessionSummary,
} from "./insight.ts";
export { validateWorkDir } from "./lifecycle.ts";
export { createLineage, isConfined, type Owner } from "./lineage.ts";
export type { LiveSessions } from "./live/registry.ts";
export type { LiveSession } from "./live/session.ts";
export { pushSample, type StatsRecorder } from "./live/stats.ts";
export { estimateCost, type Price, type PriceTable, sumTokens, type Tokens } from "./pricing.ts";
export { transcriptFileOf } from "./reading.ts";
export {
  createSessionRepo,
  type SessionPatch,
  type SessionRecord,
  type SessionRepo,
  toSession,
} from "./repo.ts";
export type { SessionService } from "./service.ts";
export * from "./session.ts";
export { createSessions, type Sessions } from "./setup.ts";
export { type TurnOutcome, turnEnd } from "./turns.ts";
export { AdoptedUntracked, AdoptUntrackedInput, UntrackedAgent, type UntrackedAgents } from "./untracked.ts";
