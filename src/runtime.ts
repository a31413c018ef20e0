import type { Database } from "bun:sqlite";
import { mkdirSync } from "node:fs";
import { hostname } from "node:os";
import { dirname, join } from "node:path";
import { createAgents } from "./agents/index.ts";
import { createAuditLog } from "./audit/index.ts";
import { createKeyStore } from "./auth/keys.ts";
import { currentPrincipal } from "./auth/principal.ts";
import { createSessionKeys } from "./auth/session-keys.ts";
import { createSseTokenStore } from "./auth/sse-tokens.ts";
import { createTenantPolicy } from "./auth/tenants.ts";
import { createBudgetRepo, createBudgetService, guardSessions } from "./budgets/index.ts";
import { createChatChannel } from "./channels/chat/index.ts";
import { channelTargets, createChannelStore, createDispatcher } from "./channels/index.ts";
import { createCheckpoints } from "./checkpoints/index.ts";
import { readChildEnv } from "./config/load.ts";
import type { Config } from "./config/schema.ts";
import { createConsensusService } from "./consensus/index.ts";
import { createDiagnostics, type DiagnosticsSink } from "./diagnostics/index.ts";
import { createAcpDriver } from "./drivers/acp/index.ts";
import { createEventBus, type EventBus } from "./events/bus.ts";
import { logSessionEvents } from "./events/log.ts";
import { createFleet, createFleetShared, type Fleet, type FleetShared, outsideFleet } from "./fleet/index.ts";
import { createHandoffRepo, createHandoffService, linkHandoffs } from "./handoff/index.ts";
import { createHealthService } from "./health/service.ts";
import { createHostGuard, listenersOf, programsUnder } from "./host/index.ts";
import { createMemoryService } from "./memory/index.ts";
import { createMetricsRecorder, createMetricsService } from "./metrics/index.ts";
import { createPipelineService } from "./pipelines/index.ts";
import { createRouterService, tierModels } from "./router/index.ts";
import { createScreenshotService } from "./screenshot/index.ts";
import { createSearchService, createSearchStore, type SearchService } from "./search/index.ts";
import { resolveAccess } from "./server/access.ts";
import { createApp, type HttpApp, MAX_BODY_BYTES } from "./server/app.ts";
import { bindNotes, localUrl, machineAddresses } from "./server/banner.ts";
import { type HttpServer, listen } from "./server/listen.ts";
import { admissionRoutes } from "./server/routes/admission.ts";
import { agentRoutes } from "./server/routes/agents.ts";
import { auditRoutes } from "./server/routes/audit.ts";
import { authRoutes } from "./server/routes/auth.ts";
import { budgetRoutes } from "./server/routes/budgets.ts";
import { channelRoutes } from "./server/routes/channels.ts";
import { checkpointRoutes } from "./server/routes/checkpoints.ts";
import { consensusRoutes } from "./server/routes/consensus.ts";
import { diagnosticsRoutes } from "./server/routes/diagnostics.ts";
import { eventRoutes } from "./server/routes/events.ts";
import { fleetRoutes } from "./server/routes/fleet.ts";
import { handoffRoutes } from "./server/routes/handoff.ts";
import { handshakeRoutes } from "./server/routes/handshake.ts";
import { memoryRoutes } from "./server/routes/memory.ts";
import { metricsRoutes } from "./server/routes/metrics.ts";
import { pipelineRoutes } from "./server/routes/pipelines.ts";
import { routerRoutes } from "./server/routes/router.ts";
import { screenshotRoutes } from "./server/routes/screenshot.ts";
import { searchRoutes } from "./server/routes/search.ts";
import { swarmRoutes } from "./server/routes/swarm.ts";
import { templateRoutes } from "./server/routes/templates.ts";
import { terminalRoutes } from "./server/routes/terminal.ts";
import { toolRoutes } from "./server/routes/tools.ts";
import { untrackedRoutes } from "./server/routes/untracked.ts";
import { verificationRoutes } from "./server/routes/verification.ts";
import { socketOfferOf } from "./server/sockets.ts";
import { defaultDashboardRoot } from "./server/static.ts";
import {
  createSessionRepo,
  createSessions,
  DEFAULT_DELIVERY,
  type SessionRepo,
  type SessionService,
  toSession,
  type UntrackedAgents,
} from "./sessions/index.ts";
import { systemClock } from "./shared/clock.ts";
import { sessionUrl } from "./shared/dashboard-links.ts";
import { AgError } from "./shared/errors.ts";
import { agentNotFound } from "./shared/install.ts";
import type { Logger } from "./shared/log.ts";
import { createProgramFacts } from "./shared/program.ts";
import { NO_TENANT_USERS, tenantUsers } from "./shared/run-as.ts";
import { selfCommand } from "./shared/self.ts";
import { ensureStateDir, openDatabase, stateDbPath } from "./store/db.ts";
import { storageFault } from "./store/faults.ts";
import { assertStateDirWritable, createStorageGuard } from "./store/guard.ts";
import { acquireInstanceLock } from "./store/instance.ts";
import { MEMORY_MIGRATIONS, SEARCH_MIGRATIONS } from "./store/migrations.ts";
import { createSwarmService } from "./swarm/index.ts";
import { tracingEnabled } from "./telemetry/index.ts";
import { traceAgentTurns } from "./telemetry/turns.ts";
import { createTemplateService, type StoredTemplate } from "./templates/index.ts";
import { createTerminalService } from "./terminal/index.ts";
import { createControlTmux } from "./tmux/control.ts";
import { createTmuxProbe } from "./tmux/probe.ts";
import type { Tmux } from "./tmux/tmux.ts";
import { createVerificationService } from "./verify/index.ts";
import { VERSION } from "./version.ts";

/**
 * The composition root: the one place that picks concrete parts (SQLite file, real tmux, the
 * Claude Code adapter, the embedded dashboard) and hands each domain only its slice of the
 * configuration.
 */
const TMUX_START_BOUND_MS = 5_000;

export interface Runtime {
  readonly url: string;
  readonly server: HttpServer;
  readonly app: HttpApp;
  readonly db: Database;
  readonly bus: EventBus;
  readonly sessions: SessionService;
  /** ag's tmux control client. */
  readonly tmux: Tmux;
  /** The search index of every conversation (docs/search.md). */
  readonly search: SearchService;
  /** Drains HTTP for up to graceMs, then releases the database and the state directory. */
  drain(graceMs: number): Promise<boolean>;
  /** Stops following sessions. Agent windows keep running: they are re-adopted at the next start. */
  close(): void;
}

export interface RuntimeOptions {
  config: Config;
  logger: Logger;
  /** Overrides for tests: another dashboard folder, a fake tmux binary, the host's free memory (bytes). */
  dashboardRoot?: string;
  tmuxBinary?: string;
  hostMemory?: () => Promise<number | null>;
}

/** What says a session's agent is up (its prompt box, a dialog) or gone: its launch holds no room. */
const AGENT_UP: ReadonlySet<string> = new Set([
  "session.idle",
  "status.permission",
  "status.question",
  "status.plan",
  "session.ended",
  "session.woke",
]);

export async function startRuntime({
  config,
  logger,
  dashboardRoot,
  tmuxBinary,
  hostMemory,
}: RuntimeOptions): Promise<Runtime> {
  const startedAt = Date.now();
  // Who each tenant's agents run as (runAs), checked before anything is made: a tenant that
  // cannot be kept apart as configured refuses the start (CONFIG_INVALID, naming it).
  const owners = tenantUsers(config.tenantWorkdirs, {
    stateDir: config.stateDir,
    selfCommand: selfCommand(),
  });
  // A full or unwritable state directory stops ag here, saying so (docs/storage.md).
  startupStep(config.stateDir, () =>
    ensureStateDir(config.stateDir, { passable: owners !== NO_TENANT_USERS }),
  );
  assertStateDirWritable(config.stateDir);
  const access = startupStep(config.stateDir, () => resolveAccess(config));
  if (access.created) {
    logger.info(`no token is configured: ag generated its own in ${access.tokenFile} (mode 0600)`);
  }
  const lock = startupStep(config.stateDir, () =>
    acquireInstanceLock(config.stateDir, {
      version: VERSION,
      startedAt: new Date(startedAt).toISOString(),
    }),
  );
  /**
   * Every resource's disposer, registered once, the moment the resource is made: a stop and a
   * failed start unwind the same stack, in reverse (docs/architecture.md, "The composition root").
   */
  const made = new DisposableStack();
  made.defer(() => lock.release());
  try {
    const db = made.adopt(
      startupStep(config.stateDir, () => openDatabase(stateDbPath(config.stateDir))),
      (open) => open.close(),
    );
    const repo = createSessionRepo(db);
    const bus = createEventBus({ logger, firstId: startedAt * 1000 });
    logSessionEvents(bus, logger);
    const diagnostics = createDiagnostics();
    diagnostics.follow(bus);
    const storage = createStorageGuard({ db, path: stateDbPath(config.stateDir), logger, diagnostics });
    made.defer(() => storage.close());
    // One real write before anything starts: a store that takes none stops ag now.
    startupStep(config.stateDir, () => storage.assertWritable(true));
    const memoryDb = config.memoryBridge.persistPath ? openMemoryFile(config.memoryBridge.persistPath) : db;
    if (memoryDb !== db) made.defer(() => memoryDb.close());
    // In a fleet, templates, memory and tenants live in its database (docs/fleet.md).
    const shared = config.fleet.databaseUrl
      ? createFleetShared<StoredTemplate>({ tenants: config.tenantWorkdirs, logger })
      : null;
    const memory = createMemoryService({
      db: memoryDb,
      clock: systemClock,
      logger,
      settings: config.memoryBridge,
      ...(shared ? { repo: shared.memory } : {}),
    });
    const audit = createAuditLog({ db, clock: systemClock });
    const keys = createKeyStore({ db, clock: systemClock });
    const sseTokens = createSseTokenStore({
      clock: systemClock,
      // In a fleet, another host's key may mint one too (fleetKeys, below).
      keys: { active: (id) => fleetKeys.active(id) },
    });
    const probe = createTmuxProbe({ socket: config.tmuxSocket, binary: tmuxBinary });
    // Probe now, while the server binds: the first health answer is then cached, and a missing
    // tmux is reported at start, not at the first session.
    void probe.check().then((result) => {
      if (!result.healthy)
        logger.warn(`tmux is not usable: ${result.error}; sessions cannot start until it is`);
    });
    // The one environment ag's children start from (ag's settings and secrets out).
    const childEnv = readChildEnv();
    const control = createControlTmux({
      env: childEnv,
      socket: config.tmuxSocket,
      session: config.muxSession,
      binary: tmuxBinary,
      logger,
    });
    made.defer(() => void control.close());
    // What each agent CLI binary said of itself (version, help), kept across restarts.
    const clis = createProgramFacts(join(config.stateDir, "agent-clis.json"));
    // At stop: a probe under way is ended, none is started after.
    made.defer(() => clis.stop());
    const agents = createAgents(
      {
        home: config.homeDir,
        dataDir: config.agentDataDir,
        trustWorkdir: config.trustWorkdir,
        selfCommand: selfCommand(),
        isRoot: process.getuid?.() === 0,
      },
      {
        defaultAgent: config.defaultAgent,
        probe: clis.version,
        help: clis.help,
        warn: (line) => logger.warn(line),
      },
    );
    // Each installed CLI's flags, read in the background: never a wait for start-up.
    void agents.probeClis().catch((error) => logger.warn("probing the agent CLIs failed", error));
    // The agent CLI ag launches by default: say how to install it now, not at the first session.
    const defaultCli = agents.get(agents.defaultAgent).cli;
    if (!Bun.which(defaultCli.command))
      logger.warn(`${agentNotFound(defaultCli)}; sessions without an agentCommand cannot start until it is`);
    // What the agents cost the host, read from /proc when asked; admission and pressure by memory.
    const host = createHostGuard({
      reserveMb: config.memoryReserveMb,
      async running() {
        const processes = await sessions.agentProcesses();
        return [...processes].flatMap(([id, p]) => {
          const rec = repo.get(id);
          return rec ? [{ id, name: rec.name, agent: rec.agent, rssBytes: p.rssBytes }] : [];
        });
      },
      report: (detail) => {
        logger.warn(detail);
        diagnostics.record("host.memory_low", detail);
      },
      available: hostMemory,
    });
    made.defer(() => host.close());
    bus.subscribe((event) => {
      if (event.session && AGENT_UP.has(event.event)) host.agentStarted(event.session.id);
      if (event.event === "session.ended") host.sessionEnded();
      if (event.event === "session.working") host.turnStarted();
    });
    let hookBaseUrl = config.baseUrl;
    const recorder = createMetricsRecorder();
    // The config's fragments first (they win the match), its prices over the built-in ones.
    const prices = { ...config.pricing, ...agents.prices(), ...config.pricing };
    // Headless sessions: their agents are ag's children, ended with it (reopened at the next start).
    const acp = createAcpDriver({ baseEnv: childEnv, logger, diagnostics });
    made.defer(() => void acp.closeAll());
    const checkpoints = createCheckpoints({
      db,
      stateDir: config.stateDir,
      settings: config.checkpoints,
      tenantWorkdirs: config.tenantWorkdirs,
      clock: systemClock,
      logger,
    });
    const domain = createSessions({
      repo,
      tmux: control,
      acp,
      mcp: createSessionKeys({ keys, selfCommand: selfCommand(), baseUrl: () => hookBaseUrl }),
      agents,
      processes: host.trees,
      programs: (pid) => programsUnder(pid),
      admission: host.admit,
      strays: host.strays,
      bus,
      clock: systemClock,
      logger,
      memory: { enabled: memory.enabled, get: (key) => memory.lookup(key) },
      templates: { defaults: (id) => templates.defaults(id) },
      tenants: createTenantPolicy(shared?.tenantWorkdirs ?? config.tenantWorkdirs),
      owners,
      diagnostics,
      audit,
      recorder,
      beforePrompt: checkpoints.beforePrompt,
      settings: {
        stateDir: config.stateDir,
        hookBaseUrl: () => hookBaseUrl,
        permissionMode: config.permissionMode,
        environment: childEnv,
        stallThresholdMs: config.stallThresholdMs,
        permissionTimeoutMs: config.permissionTimeoutMs,
        idleTimeoutMs: config.idleTimeoutMs,
        hibernateAfterMs: config.hibernateAfterMs,
        prices,
        defaultPrice: config.budgets.defaultPrice,
        maxSessions: config.maxSessions,
        sessionKeys: { maxDepth: config.sessionKeyMaxDepth, maxChildren: config.sessionKeyMaxChildren },
        delivery: { ...DEFAULT_DELIVERY, readyTimeoutMs: Math.max(5_000, config.createWaitMs - 10_000) },
      },
    });
    // Stops following sessions before their ACP children go: their ends are ag's stop, not crashes.
    made.defer(() => domain.supervisor.stop());
    // Budgets see every turn's end and every prompt: every surface reaches the guarded service.
    const budgets = createBudgetService({
      repo: createBudgetRepo(db),
      bus,
      clock: systemClock,
      logger,
      settings: config.budgets,
      sessions: domain.service,
      link: (id) => sessionUrl(config.dashboardUrl, id),
    });
    made.defer(() => budgets.close());
    const handoffRepo = createHandoffRepo(db);
    const sessions = linkHandoffs(
      guardSessions(domain.service, { budgets, templateBudget: (id) => templates.get(id).budget }),
      { repo: handoffRepo, templatePolicy: (id) => templates.get(id).handoff },
    );
    const handoffs = createHandoffService({
      repo: handoffRepo,
      sessions,
      bus,
      clock: systemClock,
      logger,
      policy: config.handoff,
      owners,
    });
    made.defer(() => handoffs.close());
    made.defer(checkpoints.start(bus, (id) => repo.get(id)));
    const templates = createTemplateService({
      db,
      clock: systemClock,
      sessions,
      ...(shared ? { repo: shared.templates } : {}),
    });
    const pipelines = createPipelineService({
      db,
      sessions,
      bus,
      clock: systemClock,
      logger,
      stageTimeoutMs: config.pipelineStageTimeoutMs,
    });
    made.defer(() => pipelines.close());
    // Agent turns as traces, when tracing is on (startTracing ran before the runtime).
    const stopTurnTracing = tracingEnabled()
      ? traceAgentTurns({
          bus,
          agentOf: (id) => {
            try {
              const session = sessions.get(id);
              const adapter = agents.get(session.agent, session.agentVersion);
              return { name: adapter.name, provider: adapter.provider };
            } catch {
              return null; // pruned meanwhile
            }
          },
          tokens: (id) => {
            try {
              return sessions.get(id).tokenUsage;
            } catch {
              return null; // pruned meanwhile
            }
          },
        })
      : () => {};
    made.defer(stopTurnTracing);
    const consensus = createConsensusService({
      db,
      sessions,
      bus,
      clock: systemClock,
      logger,
      timeoutMs: config.consensusTimeoutMs,
      owners,
    });
    made.defer(() => consensus.close());
    // The chat bot answers prompts and types replies: it needs the sessions.
    const chat = config.chatBotToken
      ? createChatChannel({
          token: config.chatBotToken,
          groupId: config.chatGroupId,
          allowedUsers: config.chatAllowedUsers,
          apiBase: config.chatApiBase,
          verbose: config.chatVerbose,
          dashboardUrl: config.dashboardUrl,
          sessions,
          budgets,
          db,
          logger,
          clock: systemClock,
          audit,
        })
      : null;
    made.defer(() => void chat?.close());
    const dispatcher = createDispatcher({
      bus,
      store: createChannelStore(db),
      targets: [...channelTargets(config, { version: VERSION }), ...(chat ? [chat.target] : [])],
      clock: systemClock,
      logger,
      diagnostics,
    });
    made.defer(() => void dispatcher.close());
    // Every turn searchable: the index (its own file, rebuilt from the transcripts) follows the bus.
    const searchDb = made.adopt(
      startupStep(config.stateDir, () => openDatabase(join(config.stateDir, "search.db"), SEARCH_MIGRATIONS)),
      (open) => open.close(),
    );
    const search = createSearchService({
      store: createSearchStore(searchDb),
      repo,
      agents,
      owners,
      bus,
      logger,
      // A fleet member's hits name it as the fleet does.
      host: config.fleet.hostName || hostname(),
      visibleSessions: (owner) => sessions.list(undefined, owner).map((s) => s.id),
    });
    made.defer(() => search.stop());
    const { hooks, supervisor } = domain;
    memory.start();
    made.defer(() => memory.stop());
    dispatcher.start();
    // Connect to tmux and re-adopt the sessions while the HTTP server comes up, and wait for it
    // before announcing readiness, but never let a broken tmux keep the API down: past the
    // bound, health says what is wrong and the control client keeps reconnecting.
    const adopting = supervisor.start().catch((error) => {
      logger.error(`tmux control client did not start: ${(error as Error).message}`);
    });
    void adopting.then(() => reportUntracked(domain.untracked, logger, diagnostics));
    // Sessions pruned at start (by the supervisor) take their checkpoints with them.
    void adopting
      .then(() => checkpoints.sweep((id) => repo.get(id) !== null))
      .catch((error) => logger.warn("removing deleted sessions' checkpoints failed", error));
    void adopting
      .then(() => search.start({ importHistory: config.searchImportHistory }))
      .catch((error) => logger.warn("search: catching up with the transcripts failed", error));
    const screenshots = createScreenshotService({
      chromiumPath: config.chromiumPath,
      allowHosts: config.screenshotAllowHosts,
      logger,
      // The session's servers: its agent's process tree, and what carries its SVC_SESSION_ID (every
      // agent is launched with it) after leaving the tree (a dev server started in the background).
      servers: async (id) => listenersOf({ root: await sessions.agentPid(id), mark: `SVC_SESSION_ID=${id}` }),
    });
    const verification = createVerificationService({
      sessions,
      bus,
      logger,
      owners,
      settings: config.verificationProtocol,
    });
    made.defer(() => void screenshots.close());
    made.defer(() => verification.dispose());
    const fleet = config.fleet.databaseUrl
      ? joinFleet(config, { bus, repo, sessions, available: host.available, shared, logger })
      : null;
    if (fleet) made.defer(() => void fleet.close());
    // In a fleet, a request another host forwards here carries its caller in its credential.
    const fleetKeys = fleet ? fleet.keys(keys) : keys;
    const terminals = createTerminalService({
      tmux: control,
      sessions,
      bus,
      audit,
      logger,
      current: (principal) => currentPrincipal(principal, fleetKeys),
    });
    const app = createApp({
      version: VERSION,
      access,
      allowedHosts: [config.host, hostOf(config.baseUrl), hostOf(config.dashboardUrl)],
      dashboard: { enabled: config.dashboardEnabled, root: dashboardRoot ?? defaultDashboardRoot() },
      health: createHealthService({
        version: VERSION,
        startedAt,
        tmux: {
          // The probe asks the server from outside; the control client knows whether it is connected.
          async check() {
            const outside = await probe.check();
            return outside.healthy ? control.health() : outside;
          },
        },
        sessions: repo,
        storage,
        memory: {
          reserveMb: config.memoryReserveMb,
          available: host.available,
          agentsRss: async () =>
            [...(await sessions.agentProcesses()).values()].reduce((sum, p) => sum + p.rssBytes, 0),
        },
        ...(fleet ? { fleet } : {}),
      }),
      sessions: fleet ? fleet.sessions(sessions) : sessions,
      intercept: fleet?.intercept ?? outsideFleet,
      hooks,
      logger,
      audit,
      storage,
      keys: fleetKeys,
      sseTokens,
      rateLimitPerMin: config.rateLimitPerMin,
      bodyLimits: { depth: config.maxBodyDepth, members: config.maxBodyMembers },
      plugins: [
        authRoutes({ keys: fleetKeys, sseTokens }),
        screenshotRoutes(screenshots, sessions),
        searchRoutes(search, sessions, fleet?.search),
        verificationRoutes(verification),
        memoryRoutes(memory, sessions),
        checkpointRoutes(sessions, checkpoints.sessions),
        templateRoutes(templates),
        budgetRoutes(budgets, sessions),
        handoffRoutes(handoffs),
        diagnosticsRoutes(diagnostics),
        untrackedRoutes(domain.untracked),
        auditRoutes(audit),
        channelRoutes(dispatcher),
        swarmRoutes(createSwarmService({ sessions, tmux: control, agents })),
        agentRoutes(agents),
        admissionRoutes(host),
        pipelineRoutes(pipelines),
        consensusRoutes(consensus),
        terminalRoutes(terminals),
        routerRoutes(createRouterService({ models: tierModels(config) })),
        handshakeRoutes(),
        toolRoutes(),
        fleetRoutes(fleet),
        eventRoutes({
          bus: fleet?.feed ?? bus,
          sessions,
          clock: systemClock,
          settings: { idleMs: config.sseIdleMs, clientTimeoutMs: config.sseClientTimeoutMs },
        }),
        metricsRoutes(
          createMetricsService({
            repo,
            agents,
            owners,
            host: { agentProcesses: () => sessions.agentProcesses(), available: host.available },
            recorder,
            clock: systemClock,
            logger,
            prices,
            defaultPrice: config.budgets.defaultPrice,
            budgets: () => budgets.overview(),
            version: VERSION,
            startedAt,
          }),
        ),
      ],
    });
    const server = await listen(app, {
      host: config.host,
      port: config.port,
      maxBodyBytes: MAX_BODY_BYTES,
      logger,
    });
    // After drain (a stop) this finds it stopped; after a failed start it frees the port.
    made.defer(() => void server.stop(0));
    const url = localUrl(config.host, server.port);
    // With port 0 the derived base URL names no real port: hooks call back where we are bound.
    if (new URL(config.baseUrl).port === "0") hookBaseUrl = url;
    lock.update({ host: config.host, port: server.port, baseUrl: url });
    const notes = bindNotes({
      host: config.host,
      port: server.port,
      access,
      addresses: machineAddresses(),
    });
    for (const note of notes) logger[note.level](note.text);
    await Promise.race([adopting, Bun.sleep(TMUX_START_BOUND_MS)]);
    // Joins once its sessions are re-adopted (what it publishes is then true), at its real URL;
    // a fleet database that does not answer keeps nothing waiting: the fleet joins when it does.
    if (fleet) await fleet.start(hookBaseUrl);
    // Answers from the chat and pipeline stages act on sessions: start them once the sessions
    // are re-adopted.
    chat?.start();
    pipelines.start();
    consensus.resume();

    return {
      url,
      server,
      app,
      db,
      bus,
      sessions,
      tmux: control,
      search,
      drain: (graceMs) => server.stop(graceMs),
      // A second close finds the stack disposed: nothing runs twice.
      close: () => disposeAll(made, logger),
    };
  } catch (error) {
    disposeAll(made, logger);
    throw error;
  }
}

/** Unwinds the stack; a disposer that throws is logged, the others still run. */
function disposeAll(stack: DisposableStack, logger: Logger): void {
  try {
    stack.dispose();
  } catch (error) {
    logger.warn("stopping ag: a resource did not close cleanly", error);
  }
}

/** A start-up step that writes to the state directory: a full or failing disk stops ag, saying so. */
function startupStep<T>(stateDir: string, step: () => T): T {
  try {
    return step();
  } catch (error) {
    const fault = storageFault(error);
    if (!fault) throw error;
    throw new AgError(fault.code, `ag cannot start: ${fault.message} (state directory ${stateDir})`);
  }
}

/** At start: agents in ag's windows that no record follows are named in the log and diagnostics. */
async function reportUntracked(
  untracked: UntrackedAgents,
  logger: Logger,
  diagnostics: DiagnosticsSink,
): Promise<void> {
  const agents = await untracked.list().catch(() => []);
  if (agents.length === 0) return;
  const ids = [...new Set(agents.map((a) => a.sessionId))];
  const detail = `${ids.length} agent(s) run in ag's tmux windows without a record (${ids.join(", ")}): GET /v1/untracked lists them, POST /v1/untracked/:sessionId/adopt or \`ag doctor --adopt-untracked\` adopts them, DELETE /v1/untracked/:sessionId or \`ag doctor --end-untracked\` ends them`;
  logger.warn(detail);
  diagnostics.record("storage.untracked", detail);
}

/** A fleet member (fleet.databaseUrl set, docs/fleet.md): named for the machine unless configured. */
function joinFleet(
  config: Config,
  deps: {
    bus: EventBus;
    repo: SessionRepo;
    sessions: SessionService;
    available(): Promise<number | null>;
    shared: FleetShared<StoredTemplate> | null;
    logger: Logger;
  },
): Fleet {
  const MB = 1024 * 1024;
  return createFleet({
    settings: { ...config.fleet, hostName: config.fleet.hostName || hostname() },
    bus: deps.bus,
    local: {
      all: () => deps.sessions.list(),
      find: (id) => {
        const found = deps.repo.get(id);
        return found && toSession(found);
      },
    },
    async figures() {
      const available = await deps.available().catch(() => null);
      return {
        availableMb: available === null ? null : Math.floor(available / MB),
        reserveMb: config.memoryReserveMb,
        running: deps.repo.live().length,
      };
    },
    sockets: socketOfferOf,
    ...(deps.shared ? { shared: deps.shared } : {}),
    logger: deps.logger,
  });
}

/** memoryBridge.persistPath: the memory bridge in a SQLite file of its own. */
function openMemoryFile(path: string): Database {
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  return openDatabase(path, MEMORY_MIGRATIONS);
}

function hostOf(url: string): string {
  return new URL(url).hostname.replace(/^\[|\]$/g, "");
}
