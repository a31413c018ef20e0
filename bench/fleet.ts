/**
 * A fleet: N REAL Claude Code sessions through the compiled binary and the project's mock model,
 * started in waves the machine can take, answering and then idling. Recorded:
 * - ag's CPU (% of one core) and RSS during a wave and with every session idle (60 s);
 * - the agents' total RSS (ag's own /proc reading, GET /v1/metrics `agents`);
 * - GET /v1/sessions latency with N sessions (p50, p90 over 100 calls);
 * - hook → SSE latency while 10 of them work: a stand-in session's hooks (UserPromptSubmit, Stop)
 *   posted by this script, timed to their state events on GET /v1/sessions/:id/events;
 * - admission with the reserve set to bite: ag restarted (the agents keep running) with
 *   SVC_MEMORY_RESERVE_MB leaving room for one more agent; single creates then batch.
 *
 *   bun bench/fleet.ts [path/to/ag] [sessions=50] [wave=5]
 */
import { mkdirSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { availableBytes } from "../src/host/index.ts";
import { readHostMemory } from "../src/host/procfs.ts";
import { parseSse } from "../tests/helpers/sse.ts";
import { claudeBenchWorld, processUsage } from "./world.ts";

// biome-ignore lint/suspicious/noExplicitAny: API answers are inspected field by field
type Json = Record<string, any>;

const binary = resolve(process.argv[2] ?? "dist/ag");
const COUNT = Number(process.argv[3] ?? 50);
const WAVE = Number(process.argv[4] ?? 5);
const MB = 1024 * 1024;

const world = await claudeBenchWorld("ag-bench-fleet");
const { root, base } = world;

const startAg = (extra: Record<string, string>) =>
  world.startAg(binary, { env: { SVC_IDLE_TIMEOUT_MS: "0", ...extra } });

async function api(
  method: string,
  path: string,
  body?: unknown,
): Promise<{ status: number; headers: Headers; body: Json }> {
  const response = await world.request(method, path, body);
  return { status: response.status, headers: response.headers, body: (await response.json()) as Json };
}
const ticks = (pid: number) => processUsage(pid).cpuTicks;
const rssMb = (pid: number) => Math.round(processUsage(pid).rssBytes / MB);
const pct = (sorted: number[], q: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
async function allIdle(ids: string[], timeoutMs = 300_000) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const sessions = (await api("GET", "/v1/sessions?status=running")).body as unknown as Json[];
    const byId = new Map(sessions.map((s) => [s.id, s.status]));
    if (ids.every((id) => byId.get(id) === "idle")) return;
    await Bun.sleep(1000);
  }
  throw new Error("sessions did not all become idle");
}

let ag = startAg({ SVC_MEMORY_RESERVE_MB: "0" });
await ag.ready();
const ids: string[] = [];
const waves: Array<{ seconds: number; cpu: number; rss: number }> = [];
for (let start = 0; start < COUNT; start += WAVE) {
  const size = Math.min(WAVE, COUNT - start);
  const t0 = Date.now();
  const c0 = ticks(ag.proc.pid);
  const batch = await api("POST", "/v1/sessions/batch", {
    sessions: Array.from({ length: size }, (_, i) => {
      const workDir = join(root, `work-${start + i}`);
      mkdirSync(workDir);
      return { workDir, prompt: "say hello" };
    }),
  });
  const created = (batch.body.created as Json[]).map((s) => s.id as string);
  if (created.length !== size) throw new Error(`wave at ${start}: ${JSON.stringify(batch.body.failed)}`);
  ids.push(...created);
  await allIdle(created);
  const seconds = (Date.now() - t0) / 1000;
  waves.push({ seconds, cpu: (ticks(ag.proc.pid) - c0) / seconds, rss: rssMb(ag.proc.pid) });
  console.error(`wave ${waves.length}: ${ids.length} sessions, ${seconds.toFixed(1)} s`);
}

await Bun.sleep(10_000); // let start-up settle
const idle0 = ticks(ag.proc.pid);
await Bun.sleep(60_000);
const idleCpu = (ticks(ag.proc.pid) - idle0) / 60;
const idleRss = rssMb(ag.proc.pid);
const metrics = (await api("GET", "/v1/metrics")).body;
const health = (await api("GET", "/v1/health")).body;

const listMs: number[] = [];
for (let i = 0; i < 100; i++) {
  const t = performance.now();
  await api("GET", "/v1/sessions");
  listMs.push(performance.now() - t);
}
listMs.sort((a, b) => a - b);

// Hook → SSE while 10 agents work: a stand-in session whose hooks this script plays.
for (const id of ids.slice(0, 10)) await api("POST", `/v1/sessions/${id}/send`, { text: "slow 60" });
const standIn = await api("POST", "/v1/sessions", {
  workDir: root,
  agentCommand: 'sh -c "sleep 3600"',
  reuse: false,
});
const standId = standIn.body.id as string;
// The hook secret as the agent gets it: the file ag wrote into the session's private folder.
const sessionDir = join(root, "state", "sessions", standId);
const secretFile = [...new Bun.Glob("hook-secret-*").scanSync(sessionDir)][0]!;
const secret = readFileSync(join(sessionDir, secretFile), "utf8").trim();
const stream = await fetch(`${base}/v1/sessions/${standId}/events`);
const reader = stream.body!.getReader();
const decoder = new TextDecoder();
let rest = "";
const waiter: { wake: ((at: number) => void) | null } = { wake: null };
void (async () => {
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    const parsed = parseSse(rest + decoder.decode(value, { stream: true }));
    rest = parsed.rest;
    if (parsed.messages.some((m) => m.event === "session.working" || m.event === "session.idle"))
      waiter.wake?.(performance.now());
  }
})();
async function hook(event: string, payload: Json): Promise<number> {
  const seen = new Promise<number>((resolve) => {
    waiter.wake = resolve;
  });
  const started = performance.now();
  await fetch(`${base}/v1/hooks/claude/${event}`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-svc-hook-secret": secret },
    body: JSON.stringify({ session_id: standId, hook_event_name: event, ...payload }),
  });
  return (await Promise.race([seen, Bun.sleep(5000).then(() => Number.NaN)])) - started;
}
await hook("Stop", {});
const hookMs: number[] = [];
for (let i = 0; i < 100; i++) {
  hookMs.push(await hook("UserPromptSubmit", { prompt: `p${i}`, prompt_id: `fleet-${i}` }));
  hookMs.push(await hook("Stop", {}));
}
const lostHooks = hookMs.filter(Number.isNaN).length;
const hookSorted = hookMs.filter((n) => !Number.isNaN(n)).sort((a, b) => a - b);
void reader.cancel();
await api("DELETE", `/v1/sessions/${standId}`);
await allIdle(ids.slice(0, 10), 120_000);

// Admission with a reserve that leaves room for one more agent.
ag.proc.kill("SIGTERM");
await ag.proc.exited;
// What the host can give, as ag's admission reads it.
const available = availableBytes((await readHostMemory())!) / MB;
// What one agent takes here, as ag itself measured the fleet (admission was off until now).
const perAgent = metrics.agents.rssBytes / MB / metrics.agents.bySession.length;
const reserve = Math.max(1, Math.floor(available - perAgent * 1.5));
ag = startAg({ SVC_MEMORY_RESERVE_MB: String(reserve) });
await ag.ready();
await allIdle(ids, 60_000);
const decisions: string[] = [];
for (let i = 0; i < 3; i++) {
  const workDir = join(root, `extra-${i}`);
  mkdirSync(workDir);
  const r = await api("POST", "/v1/sessions", { workDir, prompt: "say hello", reuse: false });
  decisions.push(
    `${r.status}${r.status === 503 ? ` ${r.body.code} retry-after ${r.headers.get("retry-after")}` : ""}`,
  );
  if (r.status === 201) ids.push(r.body.id);
}
const expectedMb = (await api("GET", "/v1/admission")).body.expectedMb as Json;
const batchDirs = [0, 1].map((i) => {
  const d = join(root, `queued-${i}`);
  mkdirSync(d);
  return { workDir: d, prompt: "say hello" };
});
const queuedAt = Date.now();
const batch = api("POST", "/v1/sessions/batch", { sessions: batchDirs });
await Bun.sleep(3000);
const waiting = (await api("GET", "/v1/admission")).body.waiting.length;
for (const id of ids.splice(0, 6)) await api("DELETE", `/v1/sessions/${id}`);
const drained = await batch;
const queueSeconds = (Date.now() - queuedAt) / 1000;
for (const s of drained.body.created as Json[]) ids.push(s.id);

const waveCpu = waves.reduce((s, w) => s + w.cpu, 0) / waves.length;
console.log(
  JSON.stringify(
    {
      sessions: COUNT,
      wave: WAVE,
      waveSeconds: Math.round((waves.reduce((s, w) => s + w.seconds, 0) / waves.length) * 10) / 10,
      agCpuDuringWavePercent: Math.round(waveCpu * 10) / 10,
      agRssDuringWavesMaxMb: Math.max(...waves.map((w) => w.rss)),
      agCpuIdlePercent: Math.round(idleCpu * 100) / 100,
      agRssIdleMb: idleRss,
      agentsRssMb: Math.round(metrics.agents.rssBytes / MB),
      agentRssEachMb: Math.round(metrics.agents.rssBytes / MB / metrics.agents.bySession.length),
      health: health.memory,
      listMs: {
        p50: Math.round(pct(listMs, 0.5) * 100) / 100,
        p90: Math.round(pct(listMs, 0.9) * 100) / 100,
      },
      hookToSseMs: {
        p50: Math.round(pct(hookSorted, 0.5) * 100) / 100,
        p90: Math.round(pct(hookSorted, 0.9) * 100) / 100,
        lost: lostHooks,
      },
      admission: {
        reserveMb: reserve,
        expectedMb,
        decisions,
        batchWaiting: waiting,
        batchCreated: (drained.body.created as Json[]).length,
        queueSeconds,
      },
    },
    null,
    2,
  ),
);

for (const id of ids) await api("DELETE", `/v1/sessions/${id}`).catch(() => {});
await world.dispose(ag.proc);
