import { closeSync, mkdirSync, openSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";

/**
 * Starts ag's server as a background process that outlives the command that started it
 * (`ag run` with no server up). It gets its own session (setsid: Ctrl+C in the terminal does not
 * reach it), no stdin, and its output appended to `<stateDir>/server.log`: inheriting the
 * caller's stdout would keep whoever reads that pipe waiting until the server exits.
 */
export interface BackgroundServer {
  pid: number;
  logPath: string;
  /** Resolves with the exit code if the server stops while we still wait for it. */
  exited: Promise<number>;
  /** The end of the log, for an error message. */
  logTail(lines?: number): string;
}

export function serverLogPath(stateDir: string): string {
  return join(stateDir, "server.log");
}

export function startBackgroundServer(options: {
  /** argv of this program (src/shared/self.ts selfCommand()) plus the server's flags. */
  argv: string[];
  stateDir: string;
  cwd: string;
  env?: Record<string, string | undefined>;
}): BackgroundServer {
  mkdirSync(options.stateDir, { recursive: true });
  const logPath = serverLogPath(options.stateDir);
  // Only what this run writes belongs in an error message: remember where it starts.
  const start = fileSize(logPath);
  const fd = openSync(logPath, "a", 0o600);
  try {
    const proc = Bun.spawn(options.argv, {
      cwd: options.cwd,
      env: options.env ?? process.env,
      stdio: ["ignore", fd, fd],
      detached: true,
    });
    // Our event loop must not wait for the server; `exited` still resolves while we are here.
    proc.unref();
    return {
      pid: proc.pid,
      logPath,
      exited: proc.exited,
      logTail(lines = 15) {
        const text = readFileSync(logPath).subarray(start).toString("utf8").trimEnd();
        return text.split("\n").slice(-lines).join("\n");
      },
    };
  } finally {
    closeSync(fd);
  }
}

function fileSize(path: string): number {
  try {
    return statSync(path).size;
  } catch {
    return 0;
  }
}
