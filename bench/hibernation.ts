/**
 * What hibernation saves and what a wake-up costs (docs/benchmarks.md, docs/hibernation.md).
 * N REAL Claude Code sessions answer one prompt from the mock model and sit idle: the agents' CPU
 * and RSS (every process under ag's tmux server) and ag's own are measured, then again once every
 * session has hibernated. Then, for a few sessions each: a prompt to a hibernated session until
 * it is delivered (its wake-up included), a create with a prompt until delivered, and the agent's
 * own cold start (`claude --resume <id>` in a tmux window of its own until its input box shows).
 * `bun bench/hibernation.ts [path/to/ag] [sessions] [seconds] [samples]`
 */
import { mkdirSync } from "node:fs";
import { join, resolve } from "node:path";
import { readProcesses } from "../src/host/procfs.ts";
import { treeOf } from "../src/host/tree.ts";
import { claudeBinary } from "../tests/helpers/agent-home.ts";
import { claudeBenchWorld, processUsage } from "./world.ts";

const binary = resolve(process.argv[2] ?? "dist/ag");
const count = Number(process.argv[3] ?? 10);
const seconds = Number(process.argv[4] ?? 30);
const samples = Number(process.argv[5] ?? 5);
const world = await claudeBenchWorld("ag-bench-hibernate");
const { root, socket } = world;
/** Long enough for every session to start and be measured awake first (each counts its own idle time). */
const afterMs = (seconds + 20 + 5 * count) * 1000;
const started = world.startAg(binary, {
  env: { SVC_IDLE_TIMEOUT_MS: "0", SVC_HIBERNATE_AFTER_MS: String(afterMs) },
});
const ag = started.proc;
await started.ready();

// biome-ignore lint/suspicious/noExplicitAny: a benchmark reads answers field by field
const api = async (method: string, path: string, body?: unknown): Promise<any> =>
  (await world.request(method, path, body)).json();

const tmux = (...args: string[]) =>
  Bun.spawnSync(["tmux", "-L", socket, ...args], { stdout: "pipe" })
    .stdout.toString()
    .trim();

/** CPU ticks and RSS of everything under ag's tmux server (the agents), and how many processes. */
async function agents(): Promise<{ cpuTicks: number; rssBytes: number; processes: number }> {
  const server = Number(tmux("display-message", "-p", "#{pid}"));
  const tree = treeOf(await readProcesses())(server).slice(1);
  return {
    cpuTicks: tree.reduce((sum, p) => sum + p.cpuTicks, 0),
    rssBytes: tree.reduce((sum, p) => sum + p.rssBytes, 0),
    processes: tree.length,
  };
}

/** Over `seconds`: the agents' and ag's CPU (% of one core) and RSS at the end. */
async function measure(label: string) {
  const [a0, g0, t0] = [await agents(), processUsage(ag.pid).cpuTicks, performance.now()];
  await Bun.sleep(seconds * 1000);
  const [a1, g1, t1] = [await agents(), processUsage(ag.pid), performance.now()];
  const elapsed = (t1 - t0) / 1000;
  const percent = (ticks: number) => `${((ticks / 100 / elapsed) * 100).toFixed(2)} %`;
  console.log(
    `${label}: agents ${a1.processes} processes, CPU ${percent(a1.cpuTicks - a0.cpuTicks)}, RSS ${(a1.rssBytes / 2 ** 20).toFixed(0)} MiB; ag CPU ${percent(g1.cpuTicks - g0)}, RSS ${(g1.rssBytes / 2 ** 20).toFixed(1)} MiB`,
  );
}

async function untilAll(check: (s: { status: string; hibernated: boolean }) => boolean, ms: number) {
  for (const deadline = Date.now() + ms; Date.now() < deadline; await Bun.sleep(1000)) {
    const sessions = (await api("GET", "/v1/sessions")) as Array<{ status: string; hibernated: boolean }>;
    if (sessions.length >= count && sessions.every(check)) return;
  }
  throw new Error("sessions did not get there in time");
}

const ids: string[] = [];
try {
  for (let i = 0; i < count; i++) {
    const workDir = join(root, `work-${i}`);
    mkdirSync(workDir);
    ids.push((await api("POST", "/v1/sessions", { workDir, prompt: "say hello" })).id);
  }
  await untilAll((s) => s.status === "idle", 60_000 + 5_000 * count);
  await Bun.sleep(5_000); // let start-up settle
  console.log(`${count} real Claude Code sessions, idle, each measured over ${seconds} s`);
  await measure("awake     ");
  await untilAll((s) => s.hibernated, afterMs + 60_000);
  await Bun.sleep(5_000);
  await measure("hibernated");

  const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
  const timed = async (work: () => Promise<unknown>) => {
    const started = performance.now();
    await work();
    return performance.now() - started;
  };
  const ms = (values: number[]) =>
    `median ${median(values).toFixed(0)} ms (${values.map((v) => v.toFixed(0)).join(", ")})`;
  const wake: number[] = [];
  for (const id of ids.slice(0, samples))
    wake.push(
      await timed(async () => {
        const sent = await api("POST", `/v1/sessions/${id}/send`, { text: "say hello" });
        if (!sent.delivered) throw new Error(`not delivered to ${id}: ${sent.reason}`);
      }),
    );
  console.log(`prompt → delivered, hibernated session (wake-up included): ${ms(wake)}`);
  const fresh: number[] = [];
  for (let i = 0; i < samples; i++) {
    const workDir = join(root, `fresh-${i}`);
    mkdirSync(workDir);
    fresh.push(
      await timed(async () => {
        const created = await api("POST", "/v1/sessions", { workDir, prompt: "say hello", hibernate: false });
        if (!created.promptDelivery?.delivered) throw new Error("a fresh create's prompt was not delivered");
        ids.push(created.id);
      }),
    );
  }
  console.log(`create with a prompt → delivered:                         ${ms(fresh)}`);
  // The agent alone: its resume of a conversation in a window with ag's environment, until its input
  // box is drawn (polled every 20 ms: a few ms of the figure are the polling's).
  const environment = Object.entries(world.env()).flatMap(([name, value]) => ["-e", `${name}=${value}`]);
  const cold: number[] = [];
  for (const id of ids.slice(samples, 2 * samples)) {
    const workDir = (await api("GET", `/v1/sessions/${id}`)).workDir as string;
    cold.push(
      await timed(async () => {
        const pane = tmux(
          "new-window",
          "-P",
          "-F",
          "#{pane_id}",
          "-c",
          workDir,
          ...environment,
          `${claudeBinary()} --resume ${id}`,
        );
        let screen = "";
        for (let i = 0; i < 1500 && !/^❯\u00a0/m.test(screen); i++) {
          await Bun.sleep(20);
          screen = tmux("capture-pane", "-p", "-t", pane);
        }
        tmux("kill-pane", "-t", pane);
        if (!/^❯\u00a0/m.test(screen))
          throw new Error(`claude --resume never showed its input box:\n${screen}`);
      }),
    );
  }
  if (cold.length) console.log(`the agent's own cold start (claude --resume → input box):  ${ms(cold)}`);
} finally {
  for (const id of ids) await api("DELETE", `/v1/sessions/${id}`);
  await world.dispose(ag, 2500);
}
