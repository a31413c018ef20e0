/**
 * What ag itself costs while N real agent sessions sit idle: its CPU (% of one core), its RSS,
 * and how many tmux commands it issues per minute (it should issue none: nothing polls).
 * The REAL Claude Code CLI against the project's mock model, through the compiled binary.
 * `bun bench/idle-sessions.ts [path/to/ag] [sessions] [seconds]`
 */
import { mkdirSync } from "node:fs";
import { join, resolve } from "node:path";
import { claudeBenchWorld, processUsage } from "./world.ts";

const binary = resolve(process.argv[2] ?? "dist/ag");
const count = Number(process.argv[3] ?? 10);
const seconds = Number(process.argv[4] ?? 60);
const world = await claudeBenchWorld("ag-bench-idle");
const { root } = world;
const started = world.startAg(binary, { args: ["--json-logs"], env: { SVC_LOG_LEVEL: "debug" } });
const ag = started.proc;
const log = started.log;
const api = async (method: string, path: string, body?: unknown) =>
  (await world.request(method, path, body)).json();
await started.ready();

const cpu = () => processUsage(ag.pid).cpuTicks; // utime + stime, clock ticks (100 Hz)
/** tmux commands logged so far; consola folds a run of identical lines into "(repeated N times)". */
const commands = () =>
  [...log().matchAll(/tmux command: [a-z-]+(?: \(repeated (\d+) times\))?/g)].reduce(
    (sum, m) => sum + (m[1] ? Number(m[1]) : 1),
    0,
  );

const [launchCpu0, launchCmd0] = [cpu(), commands()];
const ids: string[] = [];
for (let i = 0; i < count; i++) {
  const workDir = join(root, `work-${i}`);
  mkdirSync(workDir);
  const created = await api("POST", "/v1/sessions", { workDir, prompt: "say hello" });
  ids.push(created.id);
}
for (let waited = 0; waited < 120; waited++) {
  const sessions = (await api("GET", "/v1/sessions")) as Array<{ status: string }>;
  if (sessions.every((s) => s.status === "idle")) break;
  await Bun.sleep(1000);
}
const [launchCpu, launchCmds] = [cpu() - launchCpu0, commands() - launchCmd0];
await Bun.sleep(10_000); // let start-up settle

const [cpu0, cmd0, t0] = [cpu(), commands(), performance.now()];
await Bun.sleep(seconds * 1000);
const [cpu1, cmd1, t1] = [cpu(), commands(), performance.now()];
const rss = processUsage(ag.pid).rssBytes / 1024 / 1024;
const elapsed = (t1 - t0) / 1000;
const statuses = ((await api("GET", "/v1/sessions")) as Array<{ status: string }>).map((s) => s.status);

console.log(
  `${count} real agent sessions idle (${statuses.filter((s) => s === "idle").length} idle), measured over ${elapsed.toFixed(0)} s:`,
);
console.log(
  `  launch → first answer → idle, per session: ag CPU ${((launchCpu * 10) / count).toFixed(0)} ms, ${(launchCmds / count).toFixed(0)} tmux commands`,
);
console.log(`  ag CPU: ${(((cpu1 - cpu0) / 100 / elapsed) * 100).toFixed(2)} % of one core`);
console.log(`  ag RSS: ${rss.toFixed(1)} MiB`);
console.log(`  tmux commands issued: ${(((cmd1 - cmd0) / elapsed) * 60).toFixed(1)} per minute`);

for (const id of ids) await api("DELETE", `/v1/sessions/${id}`);
await world.dispose(ag, 2500);
