import type { Static } from "@sinclair/typebox";
import type { DriverName } from "../agents/agent.ts";
import type { AgentRegistry } from "../agents/registry.ts";
import type { AuditLog } from "../audit/index.ts";
import type { TenantPolicy } from "../auth/tenants.ts";
import type { PermissionMode } from "../config/schema.ts";
import type { DiagnosticsSink } from "../diagnostics/index.ts";
import type { AcpDriver } from "../drivers/acp/index.ts";
import type { McpAccess } from "../drivers/port.ts";
import type { DeliveryOptions } from "../drivers/tmux/delivery.ts";
import type { TmuxDriverDeps } from "../drivers/tmux/driver.ts";
import type { EventBus } from "../events/bus.ts";
import type { RunningProgram, StrayReaper } from "../host/index.ts";
import type { Clock } from "../shared/clock.ts";
import type { Logger } from "../shared/log.ts";
import type { RunAs, TenantUsers } from "../shared/run-as.ts";
import type { AgentProcess } from "./insight.ts";
import type { StatsRecorder } from "./live/stats.ts";
import type { OffspringLimits } from "./offspring.ts";
import type { Price, PriceTable } from "./pricing.ts";
import type { SessionRecord, SessionRepo } from "./repo.ts";
import type { HibernateSetting } from "./session.ts";

type AgentProcessUsage = Static<typeof AgentProcess>;

/** Room held for one launch by admission: bound to its session, given back if the launch fails. */
export interface AdmissionHold {
  bind(sessionId: string): void;
  release(): void;
}

/** Where memoryKeys come from; the memory bridge provides it. */
export interface MemoryReader {
  /** False when the bridge is switched off (memoryKeys are then ignored, with a warning). */
  readonly enabled?: boolean;
  get(key: string): { key: string; value: string } | null;
}

/** What a template gives a new session; the request's own fields override it. */
export interface SessionDefaults {
  workDir?: string;
  prompt?: string;
  agentCommand?: string;
  agent?: string;
  driver?: DriverName;
  env?: Record<string, string>;
  stallThresholdMs?: number;
  permissionMode?: PermissionMode;
  model?: string;
  /** Approve everything: the agent runs with bypassPermissions unless a permissionMode is given. */
  autoApprove?: boolean;
  memoryKeys?: string[];
  /** Its sessions' own hibernation setting (docs/hibernation.md). */
  hibernate?: HibernateSetting;
}

export type { McpAccess };

/** Where templateId comes from; the templates domain provides it (TEMPLATE_NOT_FOUND otherwise). */
export interface TemplateReader {
  defaults(id: string): SessionDefaults;
}

export interface SessionServiceDeps {
  repo: SessionRepo;
  /** ag's tmux client, for the terminal driver (sessions reach it only through the driver). */
  tmux: TmuxDriverDeps["tmux"];
  /** The headless driver (sessions with driver `acp`); absent: they are refused. */
  acp?: AcpDriver;
  /** ag's MCP server for headless agents that are offered it; absent: none is offered. */
  mcp?: McpAccess;
  /** Every agent ag can run; each session uses its own (record.agent). */
  agents: AgentRegistry;
  bus: EventBus;
  clock: Clock;
  logger: Logger;
  memory: MemoryReader;
  templates?: TemplateReader;
  /** Which workDirs a tenant's sessions may use (tenantWorkdirs); none = unrestricted. */
  tenants?: TenantPolicy;
  /** The OS user a tenant's agents run as (tenantWorkdirs.<tenant>.runAs); none: all run as ag. */
  owners?: TenantUsers;
  /**
   * The commit a session starts from (its baseCommit: what a review diffs against), read as the
   * tenant's user; HEAD of its workDir (shared/git.ts) unless given.
   */
  startCommit?: (workDir: string, runAs: RunAs | null) => Promise<string | null>;
  /** Where internal events worth a look go (failed deliveries, retries, tmux failures). */
  diagnostics?: DiagnosticsSink;
  /** Where what ag does to sessions on its own is recorded (sessions ended with their creator). */
  audit?: Pick<AuditLog, "append">;
  /**
   * Whether one more agent of this kind fits in the host's memory: throws HOST_MEMORY_LOW when
   * not, or, given who waits (`batch`, `pipeline:<id>`…), waits in the admission queue for room.
   * The room is held for the launch (the host domain ends the hold once its agent has started).
   */
  admission?: (agent: string, waitAs?: string) => Promise<AdmissionHold>;
  /** Ends what a killed session's agent left running (the host domain); none = not looked for. */
  strays?: StrayReaper;
  /** A process and everything under it as programs (the host domain, /proc): untracked agents' adoption. */
  programs?: (pid: number) => Promise<RunningProgram[]>;
  /** What agents' process trees cost the host, by root pid (the host domain, /proc). */
  processes?: (roots: ReadonlyMap<string, number>) => Promise<Map<string, AgentProcessUsage>>;
  /** Server-wide delivery and detection totals that outlive each session (the metrics domain). */
  recorder?: StatsRecorder;
  /**
   * Awaited before each prompt ag delivers (the checkpoints domain takes the folder as the turn
   * finds it); its failure is logged and never stops the prompt.
   */
  beforePrompt?: (session: SessionRecord, text: string) => Promise<void>;
  settings: {
    stateDir: string;
    hookBaseUrl: () => string;
    permissionMode: PermissionMode;
    stallThresholdMs: number;
    permissionTimeoutMs: number;
    /** An idle session past this ends as completed (reason idle_timeout); 0 disables. */
    idleTimeoutMs?: number;
    /** An idle session's agent is ended past this, the session kept (docs/hibernation.md); 0: off. */
    hibernateAfterMs?: number;
    maxSessions: number | null;
    /** How far a session's own key may create sessions; the config's defaults when absent. */
    sessionKeys?: OffspringLimits;
    delivery?: DeliveryOptions;
    /** Price table for cost estimates (DEFAULT_PRICES merged with the config's). */
    prices?: PriceTable;
    /** What a model with no price costs (budgets.defaultPrice): flagged, never free. */
    defaultPrice?: Price;
    /**
     * The environment every agent starts from (shared/environment.ts `declaredEnvironment`); a
     * session's own variables go over it. Absent: a terminal agent gets its session's variables
     * over the tmux server's environment.
     */
    environment?: Record<string, string>;
  };
}
