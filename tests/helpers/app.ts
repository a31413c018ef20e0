import { Database } from "bun:sqlite";
import type { AnyElysia } from "elysia";
import type { Health, HealthService } from "../../src/health/service.ts";
import { createApp, type HttpApp } from "../../src/server/app.ts";
import {
  createSessionRepo,
  createSessionService,
  type Session,
  type SessionRepo,
} from "../../src/sessions/index.ts";
import { createLogger } from "../../src/shared/log.ts";
import { migrate } from "../../src/store/db.ts";
import { MIGRATIONS } from "../../src/store/migrations.ts";

export interface TestApp extends HttpApp {
  repo: SessionRepo;
  logs: string[];
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

/** The real app over an in-memory database; only the health probe is a stand-in. */
export function testApp(
  options: {
    authToken?: string;
    allowedHosts?: string[];
    plugins?: AnyElysia[];
    dashboardRoot?: string;
    health?: HealthService;
    maxBodyBytes?: number;
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
  const app = createApp({
    version: "0.0.0-test",
    authToken: options.authToken ?? "",
    allowedHosts: options.allowedHosts ?? [],
    dashboard: { enabled: options.dashboardRoot !== undefined, root: options.dashboardRoot ?? "" },
    health: options.health ?? { check: async () => fixedHealth },
    sessions: createSessionService({ repo }),
    logger,
    plugins: options.plugins,
    maxBodyBytes: options.maxBodyBytes,
  });
  return {
    ...app,
    repo,
    logs,
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
export function sampleSession(overrides: Partial<Session> = {}): Session {
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
    ...overrides,
  };
}
