import { existsSync } from "node:fs";
import { join } from "node:path";
import { authTokenPath, readTokenFile } from "../../src/config/auth-token.ts";
import { buildBinary } from "./build-binary.ts";
import { atRunEndStop } from "./cleanup.ts";
import { tempDir } from "./temp.ts";
import { endTmuxServer } from "./tmux.ts";

let built: Promise<string> | null = null;

/**
 * The compiled binary: the one npm test built for the whole run (AG_TEST_BINARY, scripts/e2e-plan.ts),
 * else built once per test process (buildBinary), its folder removed when the run ends.
 */
export function compiledBinary(): Promise<string> {
  const shared = process.env.AG_TEST_BINARY;
  if (shared && !existsSync(shared)) throw new Error(`AG_TEST_BINARY names no file: ${shared}`);
  built ??= (async () => shared || buildBinary(tempDir("ag-build-")).path)();
  return built;
}

export interface AgProcess {
  proc: ReturnType<typeof Bun.spawn>;
  url: string;
  port: number;
  stateDir: string;
  /** The token a client on its machine sends (agToken). */
  token(): string;
  stderr(): string;
  stop(signal?: NodeJS.Signals): Promise<number>;
}

export interface RunOptions {
  env?: Record<string, string>;
  cwd?: string;
  /** What the command reads on its stdin (none: stdin is closed). */
  stdin?: string;
}

/** A world for one ag process: its own HOME, state dir, tmux socket and working directory. */
export function agEnv(extra: Record<string, string> = {}): Record<string, string> {
  const home = tempDir("ag-e2e-home-");
  const socket = `ag-e2e-${process.pid}-${Math.random().toString(36).slice(2, 8)}`;
  // ag leaves its tmux server running on purpose (sessions outlive it): the test ends it.
  atRunEndStop(() => endTmuxServer(socket));
  return {
    PATH: process.env.PATH ?? "/usr/bin:/bin",
    HOME: home,
    SVC_STATE_DIR: join(home, ".svc"),
    SVC_TMUX_SOCKET: socket,
    NO_COLOR: "1",
    ...extra,
  };
}

/** Runs a short ag command to completion. */
export function runAg(binary: string, args: string[], options: RunOptions = {}) {
  return runCommand([binary, ...args], options);
}

/** Runs a short command (ag, or a client driving it) to completion: its output and exit code. */
export async function runCommand(argv: string[], options: RunOptions = {}) {
  const proc = Bun.spawn(argv, {
    cwd: options.cwd ?? tempDir(),
    env: options.env ?? agEnv(),
    stdin: options.stdin === undefined ? "ignore" : new Blob([options.stdin]),
    stdout: "pipe",
    stderr: "pipe",
  });
  const [stdout, stderr, exitCode] = await Promise.all([
    new Response(proc.stdout).text(),
    new Response(proc.stderr).text(),
    proc.exited,
  ]);
  return { stdout, stderr, exitCode };
}

/** Starts the server and resolves once it logs where it listens. */
export async function startAg(
  binary: string,
  args: string[] = ["--port", "0", "--host", "127.0.0.1"],
  options: RunOptions = {},
): Promise<AgProcess> {
  const env = options.env ?? agEnv();
  const proc = Bun.spawn([binary, ...args], {
    cwd: options.cwd ?? tempDir(),
    env,
    stdout: "pipe",
    stderr: "pipe",
  });
  // A failed test must not leave a server behind.
  atRunEndStop(() => {
    if (proc.exitCode === null) proc.kill("SIGKILL");
  });
  let log = "";
  const decoder = new TextDecoder();
  const listening = Promise.withResolvers<string>();
  const drained = (async () => {
    for await (const chunk of proc.stderr as ReadableStream<Uint8Array>) {
      log += decoder.decode(chunk);
      const match = log.match(/listening on (http:\/\/[^\s]+)/);
      if (match) listening.resolve(match[1]!);
    }
    listening.reject(new Error(`ag exited before listening:\n${log}`));
  })();
  const timer = setTimeout(() => listening.reject(new Error(`ag did not start in time:\n${log}`)), 10_000);
  const url = await listening.promise.finally(() => clearTimeout(timer));
  return {
    proc,
    url,
    port: Number(new URL(url).port),
    stateDir: env.SVC_STATE_DIR!,
    token: () => agToken(env),
    stderr: () => log,
    async stop(signal = "SIGTERM") {
      if (proc.exitCode === null) proc.kill(signal);
      const code = await proc.exited;
      await drained.catch(() => {});
      return code;
    },
  };
}

/**
 * The token a client on ag's machine sends: SVC_AUTH_TOKEN when the test sets one, else the one
 * ag generated in its state directory when it started (where the CLI reads it).
 */
export function agToken(env: Record<string, string>): string {
  return env.SVC_AUTH_TOKEN || readTokenFile(authTokenPath(env.SVC_STATE_DIR!)).token;
}

/** A port that was free a moment ago. */
export function freePort(): number {
  const server = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response() });
  const port = server.port!;
  server.stop(true);
  return port;
}
