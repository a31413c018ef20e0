/**
 * Tracing with its collector down: the compiled binary, tracing on at sample rate 1, its OTLP
 * endpoint a loopback port that accepts connections and never answers (the worst collector:
 * every export waits for its timeout). Then rounds of 1,000 requests; for each round the errors,
 * the latency percentiles and the server's RSS after it. The same with tracing off, to compare.
 * `bun bench/otel-down.ts [path/to/ag] [rounds]`
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { killTmuxServer } from "../tests/helpers/tmux.ts";

const binary = resolve(process.argv[2] ?? "dist/ag");
const rounds = Number(process.argv[3] ?? 3);
const REQUESTS = 1_000;

/** Accepts every connection and reads what it is sent, never answering. */
const blackhole = Bun.listen({
  hostname: "127.0.0.1",
  port: 0,
  socket: { data() {} },
});

function rssMiB(pid: number): number {
  const line = readFileSync(`/proc/${pid}/status`, "utf8")
    .split("\n")
    .find((l) => l.startsWith("VmRSS:"));
  return Number(line?.match(/\d+/)?.[0] ?? 0) / 1024;
}

function percentile(sorted: number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
}

async function measure(tracing: boolean) {
  const home = mkdtempSync(join(tmpdir(), "ag-bench-"));
  const socket = `ag-bench-otel-${process.pid}-${tracing ? "on" : "off"}`;
  const port = 19_500 + (process.pid % 400) + (tracing ? 1 : 0);
  const proc = Bun.spawn([binary, "--port", String(port), "--host", "127.0.0.1"], {
    env: {
      PATH: process.env.PATH ?? "",
      HOME: home,
      SVC_TMUX_SOCKET: socket,
      SVC_LOG_LEVEL: "error",
      SVC_OTEL_ENABLED: String(tracing),
      SVC_OTEL_OTLP_ENDPOINT: `http://127.0.0.1:${blackhole.port}`,
      SVC_OTEL_SAMPLE_RATE: "1",
    },
    stdout: "ignore",
    stderr: "ignore",
  });
  const base = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 500; i++) {
    if (
      await fetch(`${base}/v1/health`)
        .then((r) => r.ok)
        .catch(() => false)
    )
      break;
    await Bun.sleep(10);
  }
  const results = [];
  for (let round = 1; round <= rounds; round++) {
    const latencies: number[] = [];
    let errors = 0;
    for (let i = 0; i < REQUESTS; i++) {
      const path = i % 2 ? "/v1/sessions" : `/v1/sessions/${crypto.randomUUID()}`;
      const started = performance.now();
      const response = await fetch(`${base}${path}`).catch(() => null);
      latencies.push(performance.now() - started);
      // The unknown id answers 404 by design; anything else but 200 is an error.
      if (!response || (response.status !== 200 && response.status !== 404)) errors++;
      await response?.arrayBuffer();
    }
    latencies.sort((a, b) => a - b);
    results.push({
      round,
      errors,
      p50Ms: Number(percentile(latencies, 0.5).toFixed(2)),
      p99Ms: Number(percentile(latencies, 0.99).toFixed(2)),
      maxMs: Number(latencies.at(-1)!.toFixed(2)),
      rssMiB: Number(rssMiB(proc.pid).toFixed(1)),
    });
  }
  proc.kill("SIGTERM");
  const started = performance.now();
  await proc.exited;
  const stopMs = Math.round(performance.now() - started);
  killTmuxServer(socket);
  rmSync(home, { recursive: true, force: true });
  return { tracing, requestsPerRound: REQUESTS, rounds: results, stopMs };
}

const off = await measure(false);
const on = await measure(true);
blackhole.stop(true);
console.log(JSON.stringify({ binary, off, on }, null, 2));
