/**
 * Start-up of the compiled binary: `ag --version`, the time from spawning `ag` to its first
 * healthy answer on GET /v1/health, and the RSS of an idle server.
 * `bun bench/startup.ts [path/to/ag] [runs]` (SVC_OTEL_* variables are passed on to the server)
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { killTmuxServer } from "../tests/helpers/tmux.ts";

const binary = resolve(process.argv[2] ?? "dist/ag");
const runs = Number(process.argv[3] ?? 30);

function stats(samples: number[]) {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
  return { min: sorted[0]!, p50: at(0.5), p90: at(0.9), max: sorted[sorted.length - 1]! };
}
const fmt = (s: ReturnType<typeof stats>) =>
  `min ${s.min.toFixed(1)} ms · p50 ${s.p50.toFixed(1)} ms · p90 ${s.p90.toFixed(1)} ms · max ${s.max.toFixed(1)} ms`;

async function versionOnce(): Promise<number> {
  const started = performance.now();
  const proc = Bun.spawn([binary, "--version"], { stdout: "ignore", stderr: "ignore" });
  await proc.exited;
  return performance.now() - started;
}

let lastPort = 19_000 + (process.pid % 1000);

/** Spawns a server in a fresh HOME; resolves with the ms from spawn to its first healthy answer. */
async function startServer() {
  const home = mkdtempSync(join(tmpdir(), "ag-bench-"));
  const port = ++lastPort;
  const started = performance.now();
  const proc = Bun.spawn([binary, "--port", String(port), "--host", "127.0.0.1"], {
    env: {
      PATH: process.env.PATH ?? "",
      HOME: home,
      SVC_TMUX_SOCKET: `ag-bench-${process.pid}`,
      SVC_LOG_LEVEL: "warn",
      // Tracing settings pass through: `SVC_OTEL_ENABLED=true bun bench/startup.ts` measures it on.
      ...Object.fromEntries(Object.entries(process.env).filter(([key]) => key.startsWith("SVC_OTEL_"))),
    },
    stdout: "ignore",
    stderr: "ignore",
  });
  let elapsed = Number.NaN;
  // Measuring, not serving: retry the connection as fast as the loop allows until it answers.
  while (performance.now() - started < 5000) {
    try {
      const response = await fetch(`http://127.0.0.1:${port}/v1/health`);
      if (response.ok && (await response.json()).status === "ok") {
        elapsed = performance.now() - started;
        break;
      }
    } catch {
      await Bun.sleep(1);
    }
  }
  return {
    proc,
    elapsed,
    async stop() {
      proc.kill("SIGTERM");
      await proc.exited;
      rmSync(home, { recursive: true, force: true });
    },
  };
}

await versionOnce(); // warm the page cache
const version: number[] = [];
for (let i = 0; i < runs; i++) version.push(await versionOnce());
const healthy: number[] = [];
for (let i = 0; i < Math.min(runs, 20); i++) {
  const server = await startServer();
  healthy.push(server.elapsed);
  await server.stop();
}

const idle = await startServer();
await Bun.sleep(2000);
const status = await Bun.file(`/proc/${idle.proc.pid}/status`).text();
const rss = Number(status.match(/VmRSS:\s+(\d+)/)?.[1] ?? Number.NaN) / 1024;
await idle.stop();

console.log(`binary: ${binary}`);
console.log(`ag --version (${version.length} runs):           ${fmt(stats(version))}`);
console.log(`spawn → first healthy /v1/health (${healthy.length} runs): ${fmt(stats(healthy))}`);
console.log(`idle server RSS, 2 s after its first answer: ${rss.toFixed(1)} MiB`);

// ag leaves its tmux server running on purpose (sessions outlive it): this one is ours to end.
killTmuxServer(`ag-bench-${process.pid}`);
