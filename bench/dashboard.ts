/**
 * The console's weight and cost: what the browser downloads (gzip), how soon the session list is
 * useful, and the CPU of ag and of Chromium while 20 sessions are listed and one terminal
 * streams a pane that prints as fast as it can.
 * `bun bench/dashboard.ts [path/to/ag] [seconds]`
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { gzipSync } from "node:zlib";
import { CHROMIUM_ARGS, findChromium, launchChromium } from "../src/screenshot/index.ts";
import { agToken } from "../tests/helpers/binary.ts";
import { killTmuxServer } from "../tests/helpers/tmux.ts";

const binary = resolve(process.argv[2] ?? "dist/ag");
const seconds = Number(process.argv[3] ?? 20);
const root = mkdtempSync(join(tmpdir(), "ag-bench-dash-"));
const socket = `ag-bench-dash-${process.pid}`;
const port = 19_900 + (process.pid % 90);
const base = `http://127.0.0.1:${port}`;
const ag = Bun.spawn([binary], {
  env: {
    PATH: process.env.PATH ?? "/usr/bin:/bin",
    HOME: root,
    SVC_STATE_DIR: join(root, "state"),
    SVC_TMUX_SOCKET: socket,
    SVC_PORT: String(port),
    SVC_HOST: "127.0.0.1",
  },
  stdout: "ignore",
  stderr: "ignore",
});

async function api(method: string, path: string, body?: unknown) {
  const response = await fetch(`${base}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${agToken({ SVC_STATE_DIR: join(root, "state") })}`,
      ...(body ? { "content-type": "application/json" } : {}),
    },
    body: body ? JSON.stringify(body) : undefined,
  });
  return response.json();
}

/** CPU seconds (user + system) of a process. */
function cpuOf(pid: number): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return 0;
  }
}

function parentOf(pid: number): number {
  try {
    return Number(readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ")[1]);
  } catch {
    return 0;
  }
}

function commOf(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/comm`, "utf8");
  } catch {
    return "";
  }
}

/** Every process below ours whose name says Chromium (the browser and its renderers, GPU, …). */
function chromiumPids(): number[] {
  const mine = process.pid;
  return readdirSync("/proc")
    .filter((d) => /^\d+$/.test(d))
    .map(Number)
    .filter((pid) => {
      if (!/chrom|headless/i.test(commOf(pid))) return false;
      for (let p = parentOf(pid), hops = 0; p > 1 && hops < 10; p = parentOf(p), hops++)
        if (p === mine) return true;
      return false;
    });
}

for (let i = 0; ; i++) {
  if (
    await fetch(`${base}/v1/health`).then(
      (r) => r.ok,
      () => false,
    )
  )
    break;
  if (i > 100) throw new Error("ag did not start");
  await Bun.sleep(100);
}

const dist = join(binary, "..", "public");
const files = readdirSync(dist).filter((f) => /\.(js|css|html)$/.test(f));
const sizes = files.map((f) => {
  const bytes = readFileSync(join(dist, f));
  return { file: f, bytes: bytes.length, gzip: gzipSync(bytes).length };
});

for (let i = 0; i < 20; i++) {
  await api("POST", "/v1/sessions", {
    name: `listed-${i}`,
    workDir: root,
    agentCommand: "sh -c 'sleep 600'",
  });
}
const streaming = await api("POST", "/v1/sessions", {
  name: "streaming",
  workDir: root,
  // Prints as fast as the pane takes it, forever.
  agentCommand: "sh -c 'while :; do seq 1 100000; done'",
});

const browser = await launchChromium(findChromium(null).path!, CHROMIUM_ARGS);
const page = await browser.newPage();
await page.goto(`${base}/dashboard/`);
await page.waitForFunction(() => document.querySelectorAll("#sessions tbody tr").length >= 21);
const paint = await page.evaluate(() => ({
  domContentLoaded: Math.round(
    performance.getEntriesByType("navigation")[0]!.toJSON().domContentLoadedEventEnd,
  ),
  listShown: Math.round(performance.now()),
}));

await page.goto(`${base}/dashboard/#/sessions/${streaming.id}`);
await page.waitForSelector('.terminal-state[data-state="live"]');
const browserPids = chromiumPids();
const agBefore = cpuOf(ag.pid);
const browserBefore = browserPids.reduce((sum, pid) => sum + cpuOf(pid), 0);
await Bun.sleep(seconds * 1000);
const agCpu = ((cpuOf(ag.pid) - agBefore) / seconds) * 100;
const browserCpu = ((browserPids.reduce((sum, pid) => sum + cpuOf(pid), 0) - browserBefore) / seconds) * 100;
const shown = await page.evaluate(() => document.querySelector(".xterm-rows")?.textContent?.length ?? 0);

await browser.close();
ag.kill("SIGTERM");
await ag.exited;
killTmuxServer(socket);
rmSync(root, { recursive: true, force: true });

console.log(
  JSON.stringify(
    {
      bundle: sizes,
      totalGzip: sizes.reduce((s, f) => s + f.gzip, 0),
      firstPageGzip: sizes.filter((f) => !f.file.startsWith("chunk-")).reduce((s, f) => s + f.gzip, 0),
      paintMs: paint,
      streamingSeconds: seconds,
      agCpuPercentOfOneCore: Math.round(agCpu * 10) / 10,
      browserCpuPercentOfOneCore: Math.round(browserCpu * 10) / 10,
      terminalCharsShown: shown,
    },
    null,
    2,
  ),
);
process.exit(0);
