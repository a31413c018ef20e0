import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { currentAuthToken, loadConfig } from "../../src/config/load.ts";
import { type Runtime, startRuntime } from "../../src/runtime.ts";
import { createLogger } from "../../src/shared/log.ts";
import { checkAgainstCatalog } from "./catalog.ts";
import { tempDir } from "./temp.ts";
import { privateSocket } from "./tmux.ts";

export type TestRuntime = Runtime & { stateDir: string; logs: string[]; token(): string };

/**
 * The real runtime (SQLite file, real tmux probe, real HTTP on port 0) in this process, on
 * 127.0.0.1 unless `containerRoot` is given (then container detection looks there and decides the
 * bind address, as it does for `ag` with no SVC_HOST). `token()`: what a client on this machine
 * sends, as the CLI finds it (SVC_AUTH_TOKEN, else the token ag generated in its state directory).
 */
export async function startTestRuntime(
  env: Record<string, string> = {},
  options: {
    tmuxBinary?: string;
    home?: string;
    configFile?: Record<string, unknown>;
    /** What the host can still give (bytes), in place of /proc/meminfo. */
    hostMemory?: () => Promise<number | null>;
    containerRoot?: string;
    /** A built dashboard to serve under /dashboard/ (scripts/dashboard.ts buildDashboard). */
    dashboardRoot?: string;
  } = {},
): Promise<TestRuntime> {
  const home = options.home ?? tempDir("ag-home-");
  if (options.configFile) {
    mkdirSync(join(home, ".svc"), { recursive: true });
    writeFileSync(join(home, ".svc", "config.json"), JSON.stringify(options.configFile));
  }
  const stateDir = env.SVC_STATE_DIR ?? join(home, ".svc");
  const { config } = loadConfig({
    env: {
      SVC_PORT: "0",
      ...(options.containerRoot ? {} : { SVC_HOST: "127.0.0.1" }),
      SVC_TMUX_SOCKET: privateSocket(),
      SVC_STATE_DIR: stateDir,
      ...env,
    },
    home,
    cwd: home,
    containerRoot: options.containerRoot,
  });
  const logs: string[] = [];
  const logger = createLogger({
    level: "debug",
    json: true,
    stream: { write: (l: string) => logs.push(l) } as never,
  });
  const runtime = await startRuntime({
    config,
    logger,
    tmuxBinary: options.tmuxBinary,
    hostMemory: options.hostMemory,
    dashboardRoot: options.dashboardRoot,
  });
  runtime.bus.subscribe(checkAgainstCatalog);
  return Object.assign(runtime, { stateDir, logs, token: () => currentAuthToken(config) });
}

/**
 * One REST call to a runtime as a client on this machine makes it: with the token it finds in
 * the state folder (ag's own, or SVC_AUTH_TOKEN), JSON in and out.
 */
export async function callApi<T = Record<string, unknown>>(
  runtime: Pick<TestRuntime, "url" | "token">,
  method: string,
  path: string,
  body?: unknown,
): Promise<{ status: number; body: T; headers: Headers }> {
  const response = await fetch(`${runtime.url}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${runtime.token()}`,
      ...(body === undefined ? {} : { "content-type": "application/json" }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  return { status: response.status, body: (text ? JSON.parse(text) : {}) as T, headers: response.headers };
}
