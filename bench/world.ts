import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Subprocess } from "bun";
import { parseStat } from "../src/host/procfs.ts";
import { startMockModel } from "../tests/fakes/mock-model.ts";
import { agentEnv, claudeBinary, type SeedOptions, seedAgentHome } from "../tests/helpers/agent-home.ts";
import { agToken, freePort } from "../tests/helpers/binary.ts";
import { killTmuxServer } from "../tests/helpers/tmux.ts";

/**
 * What the real-agent benchmarks share: a seeded HOME, the REAL Claude Code CLI on PATH, the
 * project's mock model, a private tmux socket and port, and the environment that runs the
 * compiled ag in it.
 */
export async function claudeBenchWorld(name: string, seed: Omit<SeedOptions, "trust"> = {}) {
  const root = mkdtempSync(join(tmpdir(), `${name}-`));
  const home = join(root, "home");
  const bin = join(root, "bin");
  mkdirSync(bin, { recursive: true });
  seedAgentHome(home, { trust: [], ...seed });
  symlinkSync(claudeBinary(), join(bin, "claude"));
  const mock = await startMockModel();
  const socket = `${name}-${process.pid}`;
  const port = freePort();
  const stateDir = join(root, "state");
  const base = `http://127.0.0.1:${port}`;
  /** The token ag generated in the world's state directory (as the CLI reads it). */
  const token = () => agToken({ SVC_STATE_DIR: stateDir });
  /** ag's environment in this world, and any settings of the benchmark's own. */
  const env = (extra: Record<string, string> = {}): Record<string, string> => ({
    ...agentEnv(home, mock.url),
    PATH: `${bin}:${process.env.PATH}`,
    SVC_STATE_DIR: stateDir,
    SVC_TMUX_SOCKET: socket,
    SVC_PORT: String(port),
    SVC_HOST: "127.0.0.1",
    ...extra,
  });
  return {
    root,
    mock,
    socket,
    port,
    base,
    token,
    env,
    /** The compiled ag started in this world (`args`, settings of the benchmark's own), its log kept. */
    startAg(binary: string, options: { args?: string[]; env?: Record<string, string> } = {}) {
      const proc = Bun.spawn([binary, ...(options.args ?? [])], {
        env: env(options.env),
        stderr: "pipe",
        stdout: "ignore",
      });
      let log = "";
      void (async () => {
        for await (const chunk of proc.stderr) log += new TextDecoder().decode(chunk);
      })();
      return {
        proc,
        /** What ag logged so far (stderr). */
        log: () => log,
        /** Resolves once ag logs that it listens (or after 10 s: the benchmark's first call tells). */
        async ready() {
          for (let i = 0; i < 200 && !log.includes("listening on"); i++) await Bun.sleep(50);
        },
      };
    },
    /**
     * The world taken down: `ag` ended (SIGTERM), the tmux server and the mock model stopped, its
     * files removed once `settleMs` passed (the agents write their transcripts on the way out).
     */
    async dispose(ag: Subprocess, settleMs = 0): Promise<void> {
      ag.kill("SIGTERM");
      await ag.exited;
      killTmuxServer(socket);
      await mock.stop();
      if (settleMs > 0) await Bun.sleep(settleMs);
      rmSync(root, { recursive: true, force: true });
    },
    /** An authenticated request to ag in this world, its body (if any) as JSON. */
    request(method: string, path: string, body?: unknown): Promise<Response> {
      return fetch(`${base}${path}`, {
        method,
        headers: {
          authorization: `Bearer ${token()}`,
          ...(body === undefined ? {} : { "content-type": "application/json" }),
        },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
    },
  };
}

/** A process's CPU time so far in clock ticks (100 a second) and its resident memory, from /proc. */
export function processUsage(pid: number): { cpuTicks: number; rssBytes: number } {
  const usage = parseStat(pid, readFileSync(`/proc/${pid}/stat`, "utf8"));
  if (!usage) throw new Error(`cannot read /proc/${pid}/stat`);
  return usage;
}
