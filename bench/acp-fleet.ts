/**
 * N headless sessions (driver acp) beside N terminal ones (driver tmux): the same REAL agent CLI
 * on both, through the compiled binary and the project's mock model, one driver after the other,
 * each in a fresh world (its own ag, tmux socket, HOME and mock). For each driver:
 * - ag's CPU (% of one core) and its highest RSS while the N sessions start and answer a first
 *   prompt (in waves), and with all of them idle (60 s);
 * - ag's CPU while all N answer a prompt at once (the mock streams each reply over 8 s);
 * - the agents' processes, RSS and CPU with all idle (their process trees, ag's own reading:
 *   GET /v1/metrics `agents`).
 *
 *   bun bench/acp-fleet.ts [sessions=20] [agent=gemini] [wave=5]
 *
 * The binary is dist/ag (built when missing or stale, as the e2e tests do).
 */
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { type AgentWorld, startAgentWorld } from "../tests/helpers/agent-world.ts";
import { runCleanups } from "../tests/helpers/cleanup.ts";
import { processUsage } from "./world.ts";

// biome-ignore lint/suspicious/noExplicitAny: API answers are inspected field by field
type Json = Record<string, any>;

const COUNT = Number(process.argv[2] ?? 20);
const AGENT = process.argv[3] ?? "gemini";
const WAVE = Number(process.argv[4] ?? 5);
const MB = 1024 * 1024;
const IDLE_S = 60;

const ticks = (pid: number) => processUsage(pid).cpuTicks;
const rssMb = (pid: number) => Math.round(processUsage(pid).rssBytes / MB);

async function allIdle(world: AgentWorld, ids: string[], timeoutMs = 300_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const sessions = (await world.api<Json[]>("GET", "/v1/sessions?status=running")).body;
    const byId = new Map(sessions.map((s) => [s.id, s.status]));
    if (ids.every((id) => byId.get(id) === "idle")) return;
    await Bun.sleep(500);
  }
  throw new Error("sessions did not all become idle");
}

/** Samples ag's RSS every 500 ms until stopped; answers the highest. */
function peakRss(pid: number) {
  let peak = rssMb(pid);
  const timer = setInterval(() => {
    peak = Math.max(peak, rssMb(pid));
  }, 500);
  return () => {
    clearInterval(timer);
    return Math.max(peak, rssMb(pid));
  };
}

async function measure(driver: "tmux" | "acp") {
  const world = await startAgentWorld({ SVC_IDLE_TIMEOUT_MS: "0", SVC_MEMORY_RESERVE_MB: "0" });
  try {
    const pid = world.ag.proc.pid;
    const ids: string[] = [];
    const peak = peakRss(pid);
    const c0 = ticks(pid);
    const t0 = Date.now();
    for (let start = 0; start < COUNT; start += WAVE) {
      const size = Math.min(WAVE, COUNT - start);
      const batch = await world.api<Json>("POST", "/v1/sessions/batch", {
        sessions: Array.from({ length: size }, (_, i) => {
          const workDir = join(world.workDir, `${driver}-${start + i}`);
          mkdirSync(workDir);
          return { workDir, agent: AGENT, driver, prompt: "say hello" };
        }),
      });
      const created = (batch.body.created as Json[]).map((s) => s.id as string);
      if (created.length !== size) throw new Error(`${driver} wave: ${JSON.stringify(batch.body.failed)}`);
      ids.push(...created);
      await allIdle(world, created);
      console.error(`${driver}: ${ids.length} sessions idle`);
    }
    const startSeconds = (Date.now() - t0) / 1000;
    const startCpu = (ticks(pid) - c0) / startSeconds;
    const startRss = peak();

    await Bun.sleep(10_000); // let start-up settle
    const i0 = ticks(pid);
    await Bun.sleep(IDLE_S * 1000);
    const idleCpu = (ticks(pid) - i0) / IDLE_S;
    const idleRss = rssMb(pid);
    // Two reads: the agents' CPU is measured between them (the first covers their whole life).
    await world.api("GET", "/v1/metrics");
    await Bun.sleep(10_000);
    const agents = (await world.api<Json>("GET", "/v1/metrics")).body.agents as Json;

    // All N at once: a turn whose reply the mock streams word by word over 8 s ("slow 8").
    const b0 = ticks(pid);
    const bt = Date.now();
    for (const id of ids) await world.api("POST", `/v1/sessions/${id}/send`, { text: "slow 8" });
    await allIdle(world, ids, 180_000);
    const busySeconds = (Date.now() - bt) / 1000;
    const busyCpu = (ticks(pid) - b0) / busySeconds;

    const per = agents.bySession as Json[];
    return {
      driver,
      startSeconds,
      startCpu,
      startRss,
      idleCpu,
      idleRss,
      busySeconds,
      busyCpu,
      agentProcesses: per.reduce((n, s) => n + s.processes, 0),
      agentRssMb: Math.round(agents.rssBytes / MB),
      agentCpu: per.reduce((n, s) => n + (s.cpuPercent ?? 0), 0),
      sessions: per.length,
    };
  } finally {
    await world.stop();
  }
}

type Result = Awaited<ReturnType<typeof measure>>;
const results: Result[] = [];
for (const driver of ["tmux", "acp"] as const) results.push(await measure(driver));
runCleanups();

const f1 = (n: number) => n.toFixed(1);
const f2 = (n: number) => n.toFixed(2);
console.log(`\n${COUNT} ${AGENT} sessions per driver (waves of ${WAVE})\n`);
console.log("| what | tmux | acp |\n|---|---|---|");
const row = (what: string, value: (r: Result) => string) =>
  console.log(`| ${what} | ${results.map(value).join(" | ")} |`);
row(`ag CPU, ${COUNT} launches + first answers`, (r) => `${f1(r.startCpu)} % (${f1(r.startSeconds)} s)`);
row("ag RSS, highest while they start", (r) => `${r.startRss} MiB`);
row(`ag CPU, all idle (${IDLE_S} s)`, (r) => `${f2(r.idleCpu)} %`);
row("ag RSS, all idle", (r) => `${r.idleRss} MiB`);
row(`ag CPU, all ${COUNT} streaming a turn at once`, (r) => `${f1(r.busyCpu)} % (${f1(r.busySeconds)} s)`);
row("agents measured (sessions / processes)", (r) => `${r.sessions} / ${r.agentProcesses}`);
row("agents' RSS, all", (r) => `${r.agentRssMb} MB (${Math.round(r.agentRssMb / r.sessions)} MB each)`);
row("agents' CPU, all idle", (r) => `${f1(r.agentCpu)} % of a core`);
process.exit(0);
