/**
 * SSE fan-out: N clients on GET /v1/events while the real runtime publishes R events/s for S s.
 * `bun bench/sse.ts [clients] [events/s] [seconds] [client processes]` (default 1000 100 30 4)
 *
 * Three roles of this one file, each its own process so the measurement is honest: the server
 * (the real runtime: SQLite file, tmux control client, HTTP on a free port; it publishes on its
 * own bus), the clients (Bun fetch streaming, up to 250 connections a process: Bun's default
 * cap of simultaneous fetches is 256) and this orchestrator, which samples the server's CPU and
 * RSS from /proc and compares what was delivered with what was published.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** Delivery latency histogram: 0.1 ms buckets up to 2 s; the last bucket holds the rest. */
const BUCKETS = 20_001;
const bucketOf = (ms: number) => Math.min(BUCKETS - 1, Math.max(0, Math.round(ms * 10)));

const role = process.argv[2];
if (role === "server") await serve();
else if (role === "clients") await clients(process.argv[3]!, Number(process.argv[4]));
else await orchestrate();

// ---------------------------------------------------------------------------------------------
// server: the real runtime; publishes when told on stdin, says on stdout what it published.

async function serve(): Promise<void> {
  const { loadConfig } = await import("../src/config/load.ts");
  const { startRuntime } = await import("../src/runtime.ts");
  const { createLogger } = await import("../src/shared/log.ts");
  const home = process.env.BENCH_HOME!;
  const { config } = loadConfig({
    env: {
      SVC_PORT: "0",
      SVC_HOST: "127.0.0.1",
      SVC_TMUX_SOCKET: process.env.BENCH_SOCKET!,
      SVC_STATE_DIR: join(home, "state"),
    },
    home,
    cwd: home,
  });
  const runtime = await startRuntime({ config, logger: createLogger({ level: "warn", json: false }) });
  say({ port: runtime.server.port });
  const sessions = Array.from({ length: 10 }, (_, i) => ({
    id: crypto.randomUUID(),
    name: `bench-${i}`,
    workDir: `/srv/project-${i}`,
  }));
  const text = "The change is in place and the tests pass. ".repeat(10);
  let published = 0;
  function publishOne(): number {
    const session = sessions[published % sessions.length]!;
    // The latency probe rides in meta beside the event's own payload (extra fields are allowed).
    const probe = { sentAt: performance.timeOrigin + performance.now() };
    const event =
      published % 2 === 0
        ? runtime.bus.publish({
            event: "status.working",
            session,
            detail: "idle → working",
            meta: { status: "working", previous: "idle", pendingPermission: null, source: "hook", ...probe },
          })
        : runtime.bus.publish({
            event: "message.assistant",
            session,
            detail: text,
            meta: { uuid: crypto.randomUUID(), timestamp: null, sidechain: false, ...probe },
          });
    published++;
    return event.id;
  }
  for await (const line of console) {
    const [command, rate, seconds] = line.split(" ");
    if (command === "stop") break;
    if (command !== "go") continue;
    // Catch up to the rate on a 10 ms tick, so a late timer does not lower the rate.
    const start = performance.now();
    const until = start + Number(seconds) * 1000;
    let firstId = 0;
    let lastId = 0;
    const startCount = published;
    await new Promise<void>((resolve) => {
      const tick = setInterval(() => {
        const now = Math.min(performance.now(), until);
        const due =
          now >= until ? Number(rate) * Number(seconds) : Math.floor(((now - start) / 1000) * Number(rate));
        while (published - startCount < due) {
          lastId = publishOne();
          firstId ||= lastId;
        }
        if (now >= until) {
          clearInterval(tick);
          resolve();
        }
      }, 10);
    });
    say({ published: published - startCount, firstId, lastId });
  }
  await runtime.drain(1000);
  runtime.close();
  process.exit(0);
}

// ---------------------------------------------------------------------------------------------
// clients: `count` streams; each checks that ids arrive in order, without gaps or duplicates.

interface ClientReport {
  delivered: number;
  gaps: number;
  duplicates: number;
  ended: number;
  behind: number;
  histogram: number[];
}

async function clients(url: string, count: number): Promise<void> {
  const histogram = new Uint32Array(BUCKETS);
  const streams = Array.from({ length: count }, () => ({ last: 0, delivered: 0, ended: false }));
  let gaps = 0;
  let duplicates = 0;
  let connected = 0;
  const ready = Promise.withResolvers<void>();

  async function follow(stream: (typeof streams)[number]): Promise<void> {
    const response = await fetch(url);
    const reader = response.body!.getReader();
    const decoder = new TextDecoder();
    let text = "";
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      text += decoder.decode(value, { stream: true });
      let end = text.indexOf("\n\n");
      let from = 0;
      for (; end !== -1; from = end + 2, end = text.indexOf("\n\n", from)) {
        if (text.startsWith(": connected", from) && ++connected === count) ready.resolve();
        if (!text.startsWith("id: ", from)) continue;
        const id = Number.parseInt(text.slice(from + 4, text.indexOf("\n", from)), 10);
        if (id <= stream.last) duplicates++;
        else if (stream.last !== 0 && id !== stream.last + 1) gaps++;
        stream.last = Math.max(stream.last, id);
        stream.delivered++;
        const at = text.indexOf('"sentAt":', from);
        if (at !== -1 && at < end) {
          const sentAt = Number.parseFloat(text.slice(at + 9, at + 40));
          histogram[bucketOf(performance.timeOrigin + performance.now() - sentAt)]!++;
        }
      }
      text = text.slice(from);
    }
    stream.ended = true;
  }

  for (const stream of streams) void follow(stream).catch(() => (stream.ended = true));
  await ready.promise;
  say({ ready: true });
  for await (const line of console) {
    const [command, last] = line.split(" ");
    if (command !== "finish") continue;
    const lastId = Number(last);
    const until = performance.now() + 15_000;
    while (streams.some((s) => s.last < lastId && !s.ended) && performance.now() < until) await Bun.sleep(50);
    const report: ClientReport = {
      delivered: streams.reduce((sum, s) => sum + s.delivered, 0),
      gaps,
      duplicates,
      ended: streams.filter((s) => s.ended).length,
      behind: streams.filter((s) => s.last < lastId).length,
      histogram: [...histogram],
    };
    say(report);
    break;
  }
  process.exit(0);
}

// ---------------------------------------------------------------------------------------------
// orchestrator

async function orchestrate(): Promise<void> {
  const total = Number(process.argv[2] ?? 1000);
  const rate = Number(process.argv[3] ?? 100);
  const seconds = Number(process.argv[4] ?? 30);
  const processes = Number(process.argv[5] ?? 4);
  const home = mkdtempSync(join(tmpdir(), "ag-bench-sse-"));
  const socket = `ag-bench-sse-${process.pid}`;
  const self = [process.execPath, import.meta.path];
  const server = spawn([...self, "server"], { BENCH_HOME: home, BENCH_SOCKET: socket });
  try {
    const { port } = (await server.next()) as { port: number };
    const url = `http://127.0.0.1:${port}/v1/events`;
    await Bun.sleep(1000);
    const bare = sample(server.pid);
    const perProcess = Array.from(
      { length: processes },
      (_, i) => Math.floor(total / processes) + (i < total % processes ? 1 : 0),
    );
    const fleet = perProcess.map((n) => spawn([...self, "clients", url, String(n)], {}));
    for (const client of fleet) await client.next();
    await Bun.sleep(1000);
    const idle = sample(server.pid);

    const before = cpu(server.pid);
    const fleetBefore = fleet.map((c) => cpu(c.pid));
    const startedAt = performance.now();
    server.send(`go ${rate} ${seconds}`);
    let peakRss = idle.rss;
    const sampler = setInterval(() => {
      peakRss = Math.max(peakRss, sample(server.pid).rss);
    }, 1000);
    const { published, lastId } = (await server.next()) as { published: number; lastId: number };
    const wall = (performance.now() - startedAt) / 1000;
    const used = cpu(server.pid) - before;
    const fleetUsed = fleet.reduce((sum, c, i) => sum + cpu(c.pid) - fleetBefore[i]!, 0);
    clearInterval(sampler);
    const after = sample(server.pid);
    peakRss = Math.max(peakRss, after.rss);

    for (const client of fleet) client.send(`finish ${lastId}`);
    const reports = (await Promise.all(fleet.map((c) => c.next()))) as ClientReport[];
    const sum = (key: "delivered" | "gaps" | "duplicates" | "ended" | "behind") =>
      reports.reduce((s, r) => s + r[key], 0);
    const histogram = new Array<number>(BUCKETS).fill(0);
    for (const report of reports) {
      for (let i = 0; i < BUCKETS; i++) histogram[i]! += report.histogram[i]!;
    }
    const expected = published * total;
    const delivered = sum("delivered");
    const lines = [
      `${total} SSE clients in ${processes} processes, ${rate} events/s for ${seconds} s`,
      `published ${published} events; delivered ${delivered} of ${expected} (lost ${expected - delivered}, ` +
        `${((100 * (expected - delivered)) / expected).toFixed(3)} %); gaps ${sum("gaps")}, duplicates ` +
        `${sum("duplicates")}, streams ended early ${sum("ended")}, streams behind at the end ${sum("behind")}`,
      `delivery latency (publish → client parsed): p50 ${quantile(histogram, 0.5)} ms, ` +
        `p99 ${quantile(histogram, 0.99)} ms, p99.9 ${quantile(histogram, 0.999)} ms`,
      `server CPU ${((100 * used) / wall).toFixed(1)} % of a core; clients' CPU ${((100 * fleetUsed) / wall).toFixed(1)} %`,
      `server RSS: ${mib(bare.rss)} MiB before the clients, ${mib(idle.rss)} MiB with them connected, ` +
        `peak ${mib(peakRss)} MiB while publishing, ` +
        `${mib(after.rss)} MiB at the end`,
    ];
    console.log(lines.join("\n"));
    for (const client of fleet) client.kill();
    server.send("stop");
    await server.exited;
  } finally {
    server.kill();
    // ag leaves its tmux server running on purpose (sessions outlive it): this one is ours to end.
    Bun.spawnSync(["tmux", "-L", socket, "kill-server"], { stderr: "ignore" });
    // kill-server leaves the socket file behind.
    rmSync(join(process.env.TMUX_TMPDIR || "/tmp", `tmux-${process.getuid?.() ?? 0}`, socket), {
      force: true,
    });
    rmSync(home, { recursive: true, force: true });
  }
}

/** A child process speaking JSON lines on stdout and taking commands on stdin. */
function spawn(argv: string[], env: Record<string, string>) {
  const child = Bun.spawn(argv, {
    env: { ...process.env, ...env },
    stdin: "pipe",
    stdout: "pipe",
    stderr: "inherit",
  });
  const lines = (async function* () {
    const decoder = new TextDecoder();
    let text = "";
    for await (const chunk of child.stdout) {
      text += decoder.decode(chunk, { stream: true });
      for (let nl = text.indexOf("\n"); nl !== -1; nl = text.indexOf("\n")) {
        yield JSON.parse(text.slice(0, nl)) as unknown;
        text = text.slice(nl + 1);
      }
    }
  })();
  return {
    pid: child.pid,
    exited: child.exited,
    kill: () => child.kill(),
    async next(): Promise<unknown> {
      const { value, done } = await lines.next();
      if (done) throw new Error(`${argv.slice(2).join(" ")} ended early`);
      return value;
    },
    send(line: string): void {
      child.stdin.write(`${line}\n`);
      child.stdin.flush();
    },
  };
}

function say(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value)}\n`);
}

/** User + system CPU seconds of a process (fields 14 and 15 of /proc/<pid>/stat, in ticks of 1/100 s). */
function cpu(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

function sample(pid: number): { rss: number } {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  return { rss: Number(status.match(/VmRSS:\s+(\d+) kB/)![1]) * 1024 };
}

function mib(bytes: number): string {
  return (bytes / 1024 / 1024).toFixed(1);
}

function quantile(histogram: number[], q: number): string {
  const count = histogram.reduce((a, b) => a + b, 0);
  let seen = 0;
  for (let i = 0; i < histogram.length; i++) {
    seen += histogram[i]!;
    if (seen >= q * count) return i === BUCKETS - 1 ? "≥ 2000" : (i / 10).toFixed(1);
  }
  return "n/a";
}
