import { notFound } from "../shared/install.ts";
import { tmuxArgv } from "./argv.ts";

export interface TmuxHealth {
  healthy: boolean;
  error: string | null;
}

export interface TmuxProbe {
  check(): Promise<TmuxHealth>;
}

export interface TmuxProbeOptions {
  socket: string;
  binary?: string;
  /** A result is reused this long, so a burst of health checks spawns one tmux. */
  cacheMs?: number;
  timeoutMs?: number;
  now?: () => number;
}

/** tmux's own words when the binary works but no server runs on the socket yet. */
const NO_SERVER = /no server running|error connecting to|No such file or directory/;

/**
 * Asks ag's private tmux server whether it answers. A missing server is healthy (it is started
 * with the first session); a missing binary, a hung server or any other failure is not.
 */
export function createTmuxProbe(options: TmuxProbeOptions): TmuxProbe {
  const binary = options.binary ?? "tmux";
  const cacheMs = options.cacheMs ?? 1000;
  const timeoutMs = options.timeoutMs ?? 2000;
  const now = options.now ?? Date.now;
  let cached: { at: number; result: TmuxHealth } | null = null;
  let inFlight: Promise<TmuxHealth> | null = null;

  async function run(): Promise<TmuxHealth> {
    let proc: ReturnType<typeof Bun.spawn>;
    try {
      proc = Bun.spawn(tmuxArgv(binary, options.socket, "list-sessions", "-F", "#{session_name}"), {
        stdin: "ignore",
        stdout: "ignore",
        stderr: "pipe",
      });
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      return {
        healthy: false,
        error: code === "ENOENT" ? notFound("tmux", binary) : `cannot run tmux: ${String(error)}`,
      };
    }
    const timer = setTimeout(() => proc.kill(), timeoutMs);
    const [exitCode, stderr] = await Promise.all([
      proc.exited,
      new Response(proc.stderr as ReadableStream).text(),
    ]);
    clearTimeout(timer);
    if (exitCode === 0 || NO_SERVER.test(stderr)) return { healthy: true, error: null };
    if (proc.signalCode) return { healthy: false, error: `tmux did not answer within ${timeoutMs} ms` };
    return { healthy: false, error: stderr.trim().split("\n")[0] || `tmux exited with code ${exitCode}` };
  }

  return {
    check() {
      if (cached && now() - cached.at < cacheMs) return Promise.resolve(cached.result);
      inFlight ??= run().then((result) => {
        cached = { at: now(), result };
        inFlight = null;
        return result;
      });
      return inFlight;
    },
  };
}
