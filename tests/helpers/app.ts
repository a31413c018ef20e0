import { Database } from "bun:sqlite";
import type { AnyElysia } from "elysia";
import {
  type AgentRegistry,
  createAgents,
  type HelpProbe,
  type VersionProbe,
} from "../../src/agents/index.ts";
import { type AuditLog, createAuditLog } from "../../src/audit/index.ts";
import { createKeyStore, type KeyStore } from "../../src/auth/keys.ts";
import type { SseTokenStore } from "../../src/auth/sse-tokens.ts";
import { createSseTokenStore } from "../../src/auth/sse-tokens.ts";
import { createTenantPolicy, type TenantWorkdirs } from "../../src/auth/tenants.ts";
import { createDiagnostics, type Diagnostics } from "../../src/diagnostics/index.ts";
import { type AgEvent, createEventBus, type EventBus } from "../../src/events/bus.ts";
import type { Health, HealthService } from "../../src/health/service.ts";
import { createMemoryService, type MemoryService } from "../../src/memory/index.ts";
import { createSearchService, createSearchStore, type SearchService } from "../../src/search/index.ts";
import { resolveAccess } from "../../src/server/access.ts";
import { createApp, type HttpApp } from "../../src/server/app.ts";
import { agentRoutes } from "../../src/server/routes/agents.ts";
import { auditRoutes } from "../../src/server/routes/audit.ts";
import { authRoutes } from "../../src/server/routes/auth.ts";
import { diagnosticsRoutes } from "../../src/server/routes/diagnostics.ts";
import { memoryRoutes } from "../../src/server/routes/memory.ts";
import type { RouteScope } from "../../src/server/routes/scopes.ts";
import { searchRoutes } from "../../src/server/routes/search.ts";
import { templateRoutes } from "../../src/server/routes/templates.ts";
import {
  type AdmissionHold,
  createSessionRepo,
  createSessions,
  type LiveSessions,
  type SessionRecord,
  type SessionRepo,
  type SessionService,
  type StatsRecorder,
} from "../../src/sessions/index.ts";
import type { Clock } from "../../src/shared/clock.ts";
import { systemClock } from "../../src/shared/clock.ts";
import { createLogger } from "../../src/shared/log.ts";
import { migrate } from "../../src/store/db.ts";
import { MIGRATIONS, SEARCH_MIGRATIONS } from "../../src/store/migrations.ts";
import { createTemplateService, type TemplateService } from "../../src/templates/index.ts";
import { createFakeTmux, type FakeTmux } from "../fakes/tmux.ts";
import { checkAgainstCatalog } from "./catalog.ts";
import { tempDir } from "./temp.ts";

export interface TestApp extends HttpApp {
  db: Database;
  repo: SessionRepo;
  memory: MemoryService;
  templates: TemplateService;
  audit: AuditLog;
  keys: KeyStore;
  diagnostics: Diagnostics;
  sessions: SessionService;
  /** The search index (in memory), following the sessions as in production. */
  search: SearchService;
  agents: AgentRegistry;
  /** The live sessions (each the writer of its state), to read a screen or feed an observation. */
  live: LiveSessions;
  tmux: FakeTmux;
  events: AgEvent[];
  logs: string[];
  stateDir: string;
  /**
   * The token a client of this app sends: the given authToken, else the one ag generated in
   * stateDir (local mode: requests that change state without an Origin need it).
   */
  token: string;
  /**
   * A request as the CLI on this machine sends it: in local mode (no authToken given) with ag's
   * own token unless `headers` has its own `authorization` or `token` is false. With an
   * authToken, a test sends the credential it means to.
   */
  request(
    method: string,
    path: string,
    init?: { body?: unknown; headers?: Record<string, string>; token?: false },
  ): Promise<Response>;
}

export const fixedHealth: Omit<Health, "auth"> = {
  status: "ok",
  version: "0.0.0-test",
  platform: "linux",
  uptime: 1,
  sessions: { active: 0, total: 0 },
  tmux: { healthy: true, error: null },
  storage: { healthy: true, error: null, code: null },
  memory: null,
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
    memoryEnabled?: boolean;
    idleTimeoutMs?: number;
    /** The server's hibernateAfterMs (docs/hibernation.md); 0, off, unless given. */
    hibernateAfterMs?: number;
    /** Start the supervisor (it re-adopts stored sessions: off for tests that insert rows by hand). */
    supervise?: boolean;
    /** The adapter's trustWorkdir (default true, as in production). */
    trustWorkdir?: boolean;
    /** The event bus, when a plugin built before the app must publish or subscribe on it. */
    bus?: EventBus;
    /** Verifies SSE tokens (`?token=` on the event streams). */
    sseTokens?: Pick<SseTokenStore, "consume">;
    /** Server-wide delivery and detection totals the live sessions report to (the metrics domain). */
    recorder?: StatsRecorder;
    tenantWorkdirs?: TenantWorkdirs;
    /** Requests per minute per key (per address when anonymous); off unless given. */
    rateLimitPerMin?: number;
    /**
     * How GET /v1/agents and a launch find each CLI's version. Unless given: Claude Code 2.1.197,
     * whose captured screens the simulated agent shows (simulated-agent.ts), and no other CLI.
     */
    probe?: VersionProbe;
    /** What each CLI's `--help` says (GET /v1/agents `probe`); none: no agent is probed. */
    help?: HelpProbe;
    /** Admission by memory (the host domain's check); none: every create is admitted. */
    admission?: (agent: string, waitAs?: string) => Promise<AdmissionHold>;
    /**
     * ag started again over an earlier app's store and tmux server (that app killed first:
     * killApp). Its running sessions are re-adopted.
     */
    restartOf?: TestApp;
  } = {},
): TestApp {
  const db = options.restartOf?.db ?? new Database(":memory:", { strict: true });
  migrate(db, MIGRATIONS);
  const repo = createSessionRepo(db);
  const logs: string[] = [];
  const logger = createLogger({
    level: "debug",
    json: true,
    stream: { write: (line: string) => logs.push(line) } as never,
  });
  const bus = options.bus ?? createEventBus({ logger });
  const events: AgEvent[] = [];
  bus.subscribe((e) => {
    events.push(e);
    checkAgainstCatalog(e);
  });
  const tmux = createFakeTmux({ server: options.restartOf?.tmux.server });
  const stateDir = tempDir("ag-state-");
  const agents = createAgents(
    {
      home: tempDir("ag-home-"),
      dataDir: null,
      trustWorkdir: options.trustWorkdir ?? true,
      selfCommand: ["ag"],
      isRoot: false,
    },
    {
      probe: options.probe ?? (async (command) => (command === "claude" ? "2.1.197 (Claude Code)" : null)),
      help: options.help,
      warn: (line) => logger.warn(line),
    },
  );
  const clock = options.clock ?? systemClock;
  const memory = createMemoryService({
    db,
    clock,
    logger,
    settings: { enabled: options.memoryEnabled ?? true, reaperIntervalMs: 3_600_000 },
  });
  for (const [key, value] of Object.entries(options.memory ?? {})) memory.set({ key, value });
  const diagnostics = createDiagnostics({ now: () => clock.now() });
  diagnostics.follow(bus);
  const audit = createAuditLog({ db, clock });
  const keys = createKeyStore({ db, clock });
  const sseTokens =
    options.sseTokens ??
    createSseTokenStore({
      clock,
      keys,
    });
  const domain = createSessions({
    repo,
    tmux,
    agents,
    admission: options.admission,
    bus,
    clock: options.clock ?? systemClock,
    logger,
    memory: { enabled: memory.enabled, get: (key) => memory.lookup(key) },
    templates: { defaults: (id) => templates.defaults(id) },
    tenants: createTenantPolicy(options.tenantWorkdirs ?? {}),
    diagnostics,
    recorder: options.recorder,
    // A unit test starts no process, git neither: its workDirs are no repositories, so no start
    // commit (sessions in a real repository: tests/integration and e2e).
    startCommit: async () => null,
    settings: {
      stateDir,
      hookBaseUrl: () => "http://127.0.0.1:9100",
      permissionMode: "default",
      stallThresholdMs: 120_000,
      permissionTimeoutMs: 300_000,
      idleTimeoutMs: options.idleTimeoutMs ?? 0,
      hibernateAfterMs: options.hibernateAfterMs ?? 0,
      maxSessions: options.maxSessions ?? null,
      delivery: { maxAttempts: 3, settleMs: 20, readyTimeoutMs: 2_000, confirmTimeoutMs: 300 },
    },
  });
  const sessions = domain.service;
  const templates = createTemplateService({ db, clock, sessions });
  const searchDb = new Database(":memory:", { strict: true });
  migrate(searchDb, SEARCH_MIGRATIONS);
  const search = createSearchService({
    store: createSearchStore(searchDb),
    repo,
    agents,
    bus,
    logger,
    host: "test-host",
    visibleSessions: (owner) => sessions.list(undefined, owner).map((s) => s.id),
  });
  // Routes tmux events to the sessions, as in production (the fake starts at once).
  if (options.supervise !== false) void domain.supervisor.start();
  // As in production (src/server/access.ts): no token given is ag on loopback with its own.
  const access = resolveAccess({
    authToken: options.authToken ?? "",
    authTokenGenerated: false,
    host: "127.0.0.1",
    stateDir,
    allowUnauthenticatedNetwork: false,
  });
  const app = createApp({
    version: "0.0.0-test",
    access,
    allowedHosts: options.allowedHosts ?? [],
    dashboard: { enabled: options.dashboardRoot !== undefined, root: options.dashboardRoot ?? "" },
    health: options.health ?? { check: async () => fixedHealth },
    sessions,
    hooks: domain.hooks,
    logger,
    audit,
    plugins: [
      memoryRoutes(memory, sessions),
      templateRoutes(templates),
      diagnosticsRoutes(diagnostics),
      auditRoutes(audit),
      agentRoutes(agents),
      searchRoutes(search, sessions),
      ...(options.sseTokens ? [] : [authRoutes({ keys, sseTokens: sseTokens as SseTokenStore })]),
      ...(options.plugins ?? []),
    ],
    maxBodyBytes: options.maxBodyBytes,
    keys,
    sseTokens,
    rateLimitPerMin: options.rateLimitPerMin,
    clock,
    scopes: testRouteScopes(options.plugins ?? []),
  });
  return {
    ...app,
    db,
    repo,
    memory,
    templates,
    audit,
    keys,
    diagnostics,
    sessions,
    search,
    agents,
    live: domain.live,
    tmux,
    events,
    logs,
    stateDir,
    token: access.token,
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
          headers: {
            ...(body !== undefined ? { "content-type": "application/json" } : {}),
            ...(access.mode === "local" && init.token !== false
              ? { authorization: `Bearer ${access.token}` }
              : {}),
            ...init.headers,
          },
        }),
      );
    },
  };
}

/** ag killed (-9): its live sessions are no longer followed (nothing is written), its tmux client is gone. */
export async function killApp(app: TestApp): Promise<void> {
  for (const session of app.live.all()) app.live.forget(session.id);
  await app.tmux.close();
}

let counter = 0;
export function sampleSession(overrides: Partial<SessionRecord> = {}): SessionRecord {
  counter++;
  const at = new Date(Date.UTC(2026, 0, 1, 0, 0, counter)).toISOString();
  return {
    id: crypto.randomUUID(),
    agent: "claude",
    driver: "tmux",
    name: `session-${counter}`,
    workDir: `/work/project-${counter}`,
    status: "idle",
    createdAt: at,
    updatedAt: at,
    lastActivityAt: at,
    agentCommand: null,
    agentVersion: null,
    verified: null,
    permissionMode: "default",
    model: null,
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
    baseCommit: null,
    managedBy: null,
    ...overrides,
  };
}

/**
 * A test's own routes live under /v1/test/ and need only a credential; every real route must be
 * in ROUTE_SCOPES, or the app refuses to start, in tests as in production.
 */
function testRouteScopes(plugins: AnyElysia[]): Record<string, RouteScope> {
  const paths = plugins.flatMap((p) => p.routes.map((r) => r.path)).filter((p) => p.startsWith("/v1/test/"));
  return Object.fromEntries(paths.map((path) => [path, { kind: "authenticated" } as const]));
}
