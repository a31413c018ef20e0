import { Database } from "bun:sqlite";
import type { AnyElysia } from "elysia";
import { createClaudeAdapter } from "../../src/agents/claude/adapter.ts";
import { type AgEvent, createEventBus } from "../../src/events/bus.ts";
import type { Health, HealthService } from "../../src/health/service.ts";
import { createApp, type HttpApp } from "../../src/server/app.ts";
import { createHookReceiver } from "../../src/sessions/hooks.ts";
import {
  createSessionRepo,
  createSessionService,
  type SessionRecord,
  type SessionRepo,
  type SessionService,
} from "../../src/sessions/index.ts";
import { createSupervisor } from "../../src/sessions/supervisor.ts";
import type { Clock } from "../../src/shared/clock.ts";
import { systemClock } from "../../src/shared/clock.ts";
import { createLogger } from "../../src/shared/log.ts";
import { migrate } from "../../src/store/db.ts";
import { MIGRATIONS } from "../../src/store/migrations.ts";
import { createFakeTmux, type FakeTmux } from "../fakes/tmux.ts";
import { tempDir } from "./temp.ts";

export interface TestApp extends HttpApp {
  repo: SessionRepo;
  sessions: SessionService;
  tmux: FakeTmux;
  events: AgEvent[];
  logs: string[];
  stateDir: string;
  request(
    method: string,
    path: string,
    init?: { body?: unknown; headers?: Record<string, string> },
  ): Promise<Response>;
}

export const fixedHealth: Health = {
  status: "ok",
  version: "0.0.0-test",
  platform: "linux",
  uptime: 1,
  sessions: { active: 0, total: 0 },
  tmux: { healthy: true, error: null },
  timestamp: new Date(0).toISOString(),
};

/**
 * The real app and services over an in-memory database and the fake tmux, with the real Claude
 * Code adapter reading whatever screens a test puts in the fake panes.
 */
export function testApp(
  options: {
    authToken?: string;
    allowedHosts?: string[];
    plugins?: AnyElysia[];
    dashboardRoot?: string;
    health?: HealthService;
    maxBodyBytes?: number;
    clock?: Clock;
    maxSessions?: number | null;
    memory?: Record<string, string>;
    idleTimeoutMs?: number;
    /** Start the supervisor (it re-adopts stored sessions: off for tests that insert rows by hand). */
    supervise?: boolean;
  } = {},
): TestApp {
  const db = new Database(":memory:", { strict: true });
  migrate(db, MIGRATIONS);
  const repo = createSessionRepo(db);
  const logs: string[] = [];
  const logger = createLogger({
    level: "debug",
    json: true,
    stream: { write: (line: string) => logs.push(line) } as never,
  });
  const bus = createEventBus({ logger });
  const events: AgEvent[] = [];
  bus.subscribe((e) => events.push(e));
  const tmux = createFakeTmux();
  const stateDir = tempDir("ag-state-");
  const agent = createClaudeAdapter({
    home: tempDir("ag-home-"),
    dataDir: null,
    trustWorkdir: true,
    selfCommand: ["ag"],
    isRoot: false,
  });
  const memory = options.memory ?? {};
  const sessions = createSessionService({
    repo,
    tmux,
    agent,
    bus,
    clock: options.clock ?? systemClock,
    logger,
    memory: { get: (key) => (key in memory ? { key, value: memory[key]! } : null) },
    settings: {
      stateDir,
      hookBaseUrl: () => "http://127.0.0.1:9100",
      permissionMode: "default",
      stallThresholdMs: 120_000,
      permissionTimeoutMs: 300_000,
      idleTimeoutMs: options.idleTimeoutMs ?? 0,
      maxSessions: options.maxSessions ?? null,
      delivery: { maxAttempts: 3, settleMs: 20, readyTimeoutMs: 2_000, confirmTimeoutMs: 300 },
    },
  });
  // Routes tmux events to the sessions, as in production (the fake starts at once).
  if (options.supervise !== false) {
    void createSupervisor({
      tmux,
      repo,
      sessions,
      agent,
      clock: options.clock ?? systemClock,
      logger,
    }).start();
  }
  const app = createApp({
    version: "0.0.0-test",
    authToken: options.authToken ?? "",
    allowedHosts: options.allowedHosts ?? [],
    dashboard: { enabled: options.dashboardRoot !== undefined, root: options.dashboardRoot ?? "" },
    health: options.health ?? { check: async () => fixedHealth },
    sessions,
    hooks: createHookReceiver({ repo, sessions, agent, logger }),
    logger,
    plugins: options.plugins,
    maxBodyBytes: options.maxBodyBytes,
  });
  return {
    ...app,
    repo,
    sessions,
    tmux,
    events,
    logs,
    stateDir,
    request(method, path, init = {}) {
      const body =
        init.body === undefined
          ? undefined
          : typeof init.body === "string"
            ? init.body
            : JSON.stringify(init.body);
      return app.handle(
        new Request(`http://localhost:9100${path}`, {
          method,
          body,
          headers: { ...(body !== undefined ? { "content-type": "application/json" } : {}), ...init.headers },
        }),
      );
    },
  };
}

let counter = 0;
export function sampleSession(overrides: Partial<SessionRecord> = {}): SessionRecord {
  counter++;
  const at = new Date(Date.UTC(2026, 0, 1, 0, 0, counter)).toISOString();
  return {
    id: crypto.randomUUID(),
    name: `session-${counter}`,
    workDir: `/work/project-${counter}`,
    status: "idle",
    createdAt: at,
    updatedAt: at,
    lastActivityAt: at,
    agentCommand: null,
    permissionMode: "default",
    stallThresholdMs: 120000,
    parentId: null,
    tenantId: null,
    tokenUsage: { input: 0, output: 0, cacheRead: 0, cacheCreation: 0 },
    pendingPermission: null,
    windowId: null,
    paneId: null,
    hookSecret: `hook-secret-${crypto.randomUUID()}`,
    transcriptPath: null,
    endedAt: null,
    endReason: null,
    permissions: null,
    ...overrides,
  };
}
