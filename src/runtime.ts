import type { Database } from "bun:sqlite";
import type { Config } from "./config/schema.ts";
import { createHealthService } from "./health/service.ts";
import { createApp, type HttpApp, MAX_BODY_BYTES } from "./server/app.ts";
import { isLoopbackName } from "./server/auth.ts";
import { type HttpServer, listen } from "./server/listen.ts";
import { defaultDashboardRoot } from "./server/static.ts";
import { createSessionRepo, createSessionService } from "./sessions/index.ts";
import type { Logger } from "./shared/log.ts";
import { ensureStateDir, openDatabase, stateDbPath } from "./store/db.ts";
import { acquireInstanceLock } from "./store/instance.ts";
import { createTmuxProbe } from "./tmux/probe.ts";
import { VERSION } from "./version.ts";

/**
 * The composition root: the one place that picks concrete parts (SQLite file, real tmux, the
 * embedded dashboard) and hands each domain only its slice of the configuration.
 */
export interface Runtime {
  readonly url: string;
  readonly server: HttpServer;
  readonly app: HttpApp;
  readonly db: Database;
  /** Drains HTTP for up to graceMs, then releases the database and the state directory. */
  drain(graceMs: number): Promise<boolean>;
  close(): void;
}

export interface RuntimeOptions {
  config: Config;
  logger: Logger;
  /** Overrides for tests: another dashboard folder, a fake tmux binary. */
  dashboardRoot?: string;
  tmuxBinary?: string;
}

export async function startRuntime({
  config,
  logger,
  dashboardRoot,
  tmuxBinary,
}: RuntimeOptions): Promise<Runtime> {
  const startedAt = Date.now();
  ensureStateDir(config.stateDir);
  const lock = acquireInstanceLock(config.stateDir, {
    version: VERSION,
    startedAt: new Date(startedAt).toISOString(),
  });
  let db: Database | undefined;
  try {
    db = openDatabase(stateDbPath(config.stateDir));
    const sessions = createSessionService({ repo: createSessionRepo(db) });
    const tmux = createTmuxProbe({ socket: config.tmuxSocket, binary: tmuxBinary });
    // Probe now, while the server binds: the first health answer is then cached, and a missing
    // tmux is reported at start, not at the first session.
    void tmux.check().then((result) => {
      if (!result.healthy)
        logger.warn(`tmux is not usable: ${result.error}; sessions cannot start until it is`);
    });
    const app = createApp({
      version: VERSION,
      authToken: config.authToken,
      allowedHosts: [config.host, hostOf(config.baseUrl), hostOf(config.dashboardUrl)],
      dashboard: { enabled: config.dashboardEnabled, root: dashboardRoot ?? defaultDashboardRoot() },
      health: createHealthService({ version: VERSION, startedAt, tmux, sessions }),
      sessions,
      logger,
    });
    const server = await listen(app, { host: config.host, port: config.port, maxBodyBytes: MAX_BODY_BYTES });
    const url = `http://${urlHost(config.host)}:${server.port}`;
    lock.update({ host: config.host, port: server.port, baseUrl: url });
    warnIfExposed(config, logger);

    const openDb = db;
    return {
      url,
      server,
      app,
      db: openDb,
      drain: (graceMs) => server.stop(graceMs),
      close() {
        openDb.close();
        lock.release();
      },
    };
  } catch (error) {
    db?.close();
    lock.release();
    throw error;
  }
}

function warnIfExposed(config: Config, logger: Logger): void {
  if (config.authToken || isLoopbackName(config.host)) return;
  logger.warn(
    `!!! ag listens on ${config.host} WITHOUT authentication. Anyone who can reach this address can run ` +
      "commands on this machine through the agents. Set SVC_AUTH_TOKEN, or SVC_HOST=127.0.0.1. " +
      "(Requests are still refused unless their Host is loopback or configured.)",
  );
}

function hostOf(url: string): string {
  return new URL(url).hostname.replace(/^\[|\]$/g, "");
}

/** The address a local client uses to reach a server bound to `host`. */
function urlHost(host: string): string {
  if (host === "0.0.0.0" || host === "::" || host === "") return "127.0.0.1";
  return host.includes(":") ? `[${host}]` : host;
}
