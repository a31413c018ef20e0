import type { AgentAdapter } from "../agents/agent.ts";
import type { TenantPolicy } from "../auth/tenants.ts";
import type { PermissionMode } from "../config/schema.ts";
import type { DiagnosticsSink } from "../diagnostics/index.ts";
import type { EventBus } from "../events/bus.ts";
import type { EventName } from "../events/names.ts";
import type { Clock } from "../shared/clock.ts";
import { AgError } from "../shared/errors.ts";
import type { Logger } from "../shared/log.ts";
import type { Tmux } from "../tmux/tmux.ts";
import { DEFAULT_DELIVERY, type DeliveryOptions } from "./delivery.ts";
import { createLiveSession, type LiveSession } from "./live.ts";
import type { StatsRecorder } from "./live-stats.ts";
import type { PriceTable } from "./pricing.ts";
import type { SessionRecord, SessionRepo } from "./repo.ts";
import { isTerminal } from "./session.ts";

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
  env?: Record<string, string>;
  stallThresholdMs?: number;
  permissionMode?: PermissionMode;
  /** Approve everything: the agent runs with bypassPermissions unless a permissionMode is given. */
  autoApprove?: boolean;
  memoryKeys?: string[];
}

/** Where templateId comes from; the templates domain provides it (TEMPLATE_NOT_FOUND otherwise). */
export interface TemplateReader {
  defaults(id: string): SessionDefaults;
}

export interface SessionServiceDeps {
  repo: SessionRepo;
  tmux: Tmux;
  agent: AgentAdapter;
  bus: EventBus;
  clock: Clock;
  logger: Logger;
  memory: MemoryReader;
  templates?: TemplateReader;
  /** Which workDirs a tenant's sessions may use (tenantWorkdirs); none = unrestricted. */
  tenants?: TenantPolicy;
  /** Where internal events worth a look go (failed deliveries, retries, tmux failures). */
  diagnostics?: DiagnosticsSink;
  /** Server-wide delivery and detection totals that outlive each session (the metrics domain). */
  recorder?: StatsRecorder;
  settings: {
    stateDir: string;
    hookBaseUrl: () => string;
    permissionMode: PermissionMode;
    stallThresholdMs: number;
    permissionTimeoutMs: number;
    /** An idle session past this ends as completed (reason idle_timeout); 0 disables. */
    idleTimeoutMs?: number;
    maxSessions: number | null;
    delivery?: DeliveryOptions;
    /** Price table for cost estimates (DEFAULT_PRICES merged with the config's). */
    prices?: PriceTable;
  };
}

/**
 * What the parts of the session service share: the live sessions, the per-session keyboard
 * queue, and the lookups every operation starts with.
 */
export interface SessionContext {
  readonly deps: SessionServiceDeps;
  readonly live: Map<string, LiveSession>;
  readonly delivery: DeliveryOptions;
  /** The stored session, or SESSION_NOT_FOUND. */
  record(id: string): SessionRecord;
  /** The live session in a window, or SESSION_NOT_FOUND (an ended one is gone for actions). */
  running(id: string): LiveSession;
  /** One keyboard at a time per session: deliveries and key presses never interleave. */
  exclusive<T>(id: string, work: () => Promise<T>): Promise<T>;
  follow(record: SessionRecord, booting: boolean): LiveSession;
  forget(id: string): void;
  publish(record: SessionRecord, event: EventName, detail: string, meta?: Record<string, unknown>): void;
  /** Set by the service: what to do when a live session's idle timer runs out. */
  onIdleTimeout: (id: string) => void;
}

export function createSessionContext(deps: SessionServiceDeps): SessionContext {
  const live = new Map<string, LiveSession>();
  const queues = new Map<string, Promise<unknown>>();
  const context: SessionContext = {
    deps,
    live,
    delivery: deps.settings.delivery ?? DEFAULT_DELIVERY,
    record(id) {
      const found = deps.repo.get(id);
      if (!found) throw new AgError("SESSION_NOT_FOUND", `no session ${id}`);
      return found;
    },
    running(id) {
      const session = live.get(id);
      if (!session || isTerminal(session.record().status)) {
        throw new AgError("SESSION_NOT_FOUND", `no running session ${id}`);
      }
      return session;
    },
    exclusive(id, work) {
      const previous = queues.get(id) ?? Promise.resolve();
      const next = previous.then(work, work);
      queues.set(
        id,
        next.catch(() => {}),
      );
      return next;
    },
    follow(record, booting) {
      const existing = live.get(record.id);
      if (existing) return existing;
      const session = createLiveSession(
        record,
        {
          ...deps,
          permissionTimeoutMs: deps.settings.permissionTimeoutMs,
          idleTimeoutMs: deps.settings.idleTimeoutMs ?? 0,
          onIdleTimeout: () => context.onIdleTimeout(record.id),
        },
        booting,
      );
      live.set(record.id, session);
      return session;
    },
    forget(id) {
      live.get(id)?.dispose();
      live.delete(id);
    },
    publish(record, event, detail, meta = {}) {
      deps.bus.publish({
        event,
        session: { id: record.id, name: record.name, workDir: record.workDir },
        detail,
        meta,
      });
    },
    onIdleTimeout: () => {},
  };
  return context;
}
