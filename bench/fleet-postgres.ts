/**
 * A fleet on PostgreSQL (docs/fleet.md): three hosts (real runtimes in this process: SQLite file,
 * real tmux, HTTP on port 0) on a real PostgreSQL server of the script's own, 2 s lease.
 * Recorded:
 * - a state change on host A (a hook POSTed to A) → the event on host C's /v1/events (p50, p90);
 * - GET /v1/sessions on C with 3 × 20 sessions (`sleep` stand-ins) in the fleet (p50, p90);
 * - host loss: a fourth host, its own ag process, SIGKILLed → offline in C's GET /v1/fleet
 *   (each of 5 rounds, against lease + one renewal period).
 *
 *   bun bench/fleet-postgres.ts [rounds=200]
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadConfig } from "../src/config/load.ts";
import { type Runtime, startRuntime } from "../src/runtime.ts";
import { createLogger } from "../src/shared/log.ts";
import { startPostgres } from "../tests/helpers/postgres.ts";
import { parseSse } from "../tests/helpers/sse.ts";
import { killTmuxServer } from "../tests/helpers/tmux.ts";

const rounds = Number(process.argv[2] ?? 200);
const LEASE_MS = 2000;
const SESSIONS_PER_HOST = 20;
/** A stand-in agent: the launch's own arguments go to sh, not to sleep. */
const SLEEPER = "sh -c 'sleep 3600'";
const pg = await startPostgres();
const databaseUrl = await pg.database("fleet_bench");
const home = mkdtempSync(join(tmpdir(), "ag-bench-fleet-"));
const sockets: string[] = [];
const token = "bench-token";

function fleetEnv(name: string): Record<string, string> {
  return {
    SVC_FLEET_DATABASE_URL: databaseUrl,
    SVC_FLEET_HOST_NAME: name,
    SVC_FLEET_LEASE_MS: String(LEASE_MS),
    SVC_AUTH_TOKEN: token,
    SVC_IDLE_TIMEOUT_MS: "0",
    SVC_MEMORY_RESERVE_MB: "0",
    SVC_MAX_SESSIONS: "100",
  };
}

async function host(name: string): Promise<Runtime> {
  const socket = `ag-bench-fleet-${name}-${process.pid}`;
  sockets.push(socket);
  const { config } = loadConfig({
    env: {
      SVC_PORT: "0",
      SVC_HOST: "127.0.0.1",
      SVC_TMUX_SOCKET: socket,
      SVC_STATE_DIR: join(home, name),
      ...fleetEnv(name),
    },
    home,
    cwd: home,
  });
  return startRuntime({ config, logger: createLogger({ level: "error", json: false }) });
}

const call = (runtime: Pick<Runtime, "url">, path: string, init: RequestInit = {}) =>
  fetch(`${runtime.url}${path}`, {
    ...init,
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json", ...init.headers },
  });

function quantiles(samples: number[]): string {
  const sorted = [...samples].sort((x, y) => x - y);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!.toFixed(2);
  return `p50 ${at(0.5)} ms · p90 ${at(0.9)} ms · p99 ${at(0.99)} ms (${sorted.length} samples)`;
}

const [a, b, c] = [await host("a"), await host("b"), await host("c")];

// --- A state change on A → the event on C's stream -----------------------------------------------
const created = await a.sessions.create({ workDir: home, agentCommand: SLEEPER, reuse: false });
const id = created.session.id;
const secret = a.db
  .query<{ hook_secret: string }, [string]>("SELECT hook_secret FROM sessions WHERE id = ?")
  .get(id)!.hook_secret;
const stream = (await call(c, "/v1/events")).body!.getReader();
/** The next state event of the session on C's stream (working or idle, as hook-latency.ts counts). */
const STATE_EVENTS = new Set(["session.working", "session.idle"]);
const waiting: { resolve: ((at: number) => void) | null } = { resolve: null };
void (async () => {
  const decoder = new TextDecoder();
  let text = "";
  for (;;) {
    const { value, done } = await stream.read();
    if (done) return;
    const parsed = parseSse(text + decoder.decode(value, { stream: true }));
    text = parsed.rest;
    for (const m of parsed.messages) {
      const session = m.data?.session as { id?: string } | undefined;
      if (session?.id === id && STATE_EVENTS.has(m.event ?? "")) waiting.resolve?.(performance.now());
    }
  }
})();

/** A hook POSTed to A, timed to the state event on C's stream; null when none came in 5 s. */
async function change(hook: string, payload: Record<string, unknown>): Promise<number | null> {
  let timer: Timer | undefined;
  const seen = new Promise<number | null>((resolve) => {
    waiting.resolve = resolve;
    timer = setTimeout(() => resolve(null), 5_000);
  });
  const started = performance.now();
  await fetch(`${a.url}/v1/hooks/claude/${hook}`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-svc-hook-secret": secret },
    body: JSON.stringify({ session_id: id, hook_event_name: hook, ...payload }),
  });
  const at = await seen;
  clearTimeout(timer);
  waiting.resolve = null;
  return at === null ? null : at - started;
}
// The stand-in never shows the agent's UI, so the session is still "working" (starting): end that first.
await change("Stop", {});
const latency: number[] = [];
let missed = 0;
for (let i = 0; i < rounds; i++) {
  for (const sample of [
    await change("UserPromptSubmit", { prompt: `p${i}`, prompt_id: `b-${i}` }),
    await change("Stop", {}),
  ]) {
    if (sample === null) missed++;
    else latency.push(sample);
  }
}
console.log(`state change on A → event on C's SSE: ${quantiles(latency)}; ${missed} without an event in 5 s`);
await stream.cancel();

// --- The fleet's list: 3 × 20 sessions -----------------------------------------------------------
for (const runtime of [a, b, c]) {
  const have = runtime === a ? 1 : 0;
  for (let i = have; i < SESSIONS_PER_HOST; i++)
    await runtime.sessions.create({ workDir: home, agentCommand: SLEEPER, reuse: false });
}
const total = SESSIONS_PER_HOST * 3;
for (let seen = 0; seen < total; ) {
  seen = ((await (await call(c, "/v1/sessions")).json()) as unknown[]).length;
  await Bun.sleep(20);
}
const listing: number[] = [];
for (let i = 0; i < rounds; i++) {
  const started = performance.now();
  const answer = await call(c, "/v1/sessions");
  await answer.arrayBuffer();
  listing.push(performance.now() - started);
}
console.log(`GET /v1/sessions on C, ${total} sessions on 3 hosts: ${quantiles(listing)}`);

// --- Host loss: its own process, SIGKILLed --------------------------------------------------------
interface FleetHosts {
  hosts: Array<{ name: string; online: boolean }>;
}
const online = async (name: string) =>
  ((await (await call(c, "/v1/fleet")).json()) as FleetHosts).hosts.find((h) => h.name === name)?.online;
const detection: number[] = [];
for (let round = 0; round < 5; round++) {
  const socket = `ag-bench-fleet-d-${process.pid}`;
  sockets.push(socket);
  const d = Bun.spawn([process.execPath, join(import.meta.dir, "..", "src", "main.ts")], {
    env: {
      PATH: process.env.PATH ?? "",
      HOME: home,
      SVC_PORT: "0",
      SVC_HOST: "127.0.0.1",
      SVC_TMUX_SOCKET: socket,
      SVC_STATE_DIR: join(home, "d"),
      ...fleetEnv("d"),
    },
    stdout: "ignore",
    stderr: "ignore",
  });
  while ((await online("d")) !== true) await Bun.sleep(20);
  // Just after a renewal would be the worst case; a kill at a random point of the period is the usual one.
  await Bun.sleep(Math.random() * (LEASE_MS / 4));
  d.kill("SIGKILL");
  await d.exited;
  const killed = performance.now();
  while ((await online("d")) !== false) await Bun.sleep(10);
  detection.push(performance.now() - killed);
}
console.log(
  `host loss (SIGKILL) → offline on C, lease ${LEASE_MS} ms: ${detection.map((ms) => ms.toFixed(0)).join(", ")} ms (max ${Math.max(...detection).toFixed(0)}, bound lease + ${LEASE_MS / 4} ms)`,
);

for (const runtime of [a, b, c]) {
  await runtime.drain(100);
  runtime.close();
}
for (const socket of sockets) killTmuxServer(socket);
await pg.stop();
rmSync(pg.dir, { recursive: true, force: true });
rmSync(home, { recursive: true, force: true });
process.exit(0);
