/**
 * Hostile input against the compiled binary (issue 28): bodies of nested arrays sent without any
 * secret, while `/v1/health` is asked one request after another; the server's RSS from
 * /proc/<pid>/status; malformed Host headers over a raw socket. The binary runs with
 * NODE_ENV=development, as a user's shell may have it.
 * `bun bench/hostile-input.ts [path/to/ag] [requests per case] [concurrent senders]`
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { killTmuxServer } from "../tests/helpers/tmux.ts";

const binary = resolve(process.argv[2] ?? "dist/ag");
const requests = Number(process.argv[3] ?? 50);
const senders = Number(process.argv[4] ?? 4);
const home = mkdtempSync(join(tmpdir(), "ag-bench-"));
const port = 18_000 + (process.pid % 1000);
const socket = `ag-bench-${process.pid}`;
const proc = Bun.spawn([binary, "--port", String(port), "--host", "127.0.0.1"], {
  env: {
    PATH: process.env.PATH ?? "",
    HOME: home,
    NODE_ENV: "development",
    SVC_AUTH_TOKEN: "bench",
    SVC_TMUX_SOCKET: socket,
    // The failure budget would slow the unauthenticated requests on purpose; it is not measured here.
    SVC_RATE_LIMIT_PER_MIN: "0",
  },
  stderr: "pipe",
});
const base = `http://127.0.0.1:${port}`;
for (let i = 0; i < 500; i++) {
  try {
    if ((await fetch(`${base}/v1/health`)).ok) break;
  } catch {
    await Bun.sleep(10);
  }
}

const rssMiB = () =>
  Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${proc.pid}/status`, "utf8"))?.[1]) / 1024;
const nested = (bytes: number) => "[".repeat(bytes / 2) + "]".repeat(bytes / 2);
const pct = (values: number[], p: number) =>
  values.toSorted((a, b) => a - b)[Math.min(values.length - 1, Math.floor(values.length * p))]!;
const ms = (value: number) => `${value.toFixed(1)} ms`;

async function timed(path: string, body: string, headers: Record<string, string> = {}) {
  const started = performance.now();
  const response = await fetch(`${base}${path}`, {
    method: "POST",
    body,
    headers: { "content-type": "application/json", ...headers },
  });
  await response.arrayBuffer();
  return { status: response.status, ms: performance.now() - started };
}

/** `requests` bodies from `senders` concurrent clients, health asked throughout; RSS sampled. */
async function hostile(label: string, path: string, body: string, headers?: Record<string, string>) {
  await timed(path, body, headers);
  const before = rssMiB();
  let peak = before;
  const answers: number[] = [];
  const statuses = new Set<number>();
  let left = requests;
  const load = Promise.all(
    Array.from({ length: senders }, async () => {
      while (left-- > 0) {
        const answer = await timed(path, body, headers);
        answers.push(answer.ms);
        statuses.add(answer.status);
        peak = Math.max(peak, rssMiB());
      }
    }),
  );
  let done = false;
  void load.then(() => (done = true));
  const health: number[] = [];
  while (!done) {
    const started = performance.now();
    await (await fetch(`${base}/v1/health`)).arrayBuffer();
    health.push(performance.now() - started);
  }
  await load;
  console.log(
    `| ${label} | ${[...statuses].join(", ")} | p50 ${ms(pct(answers, 0.5))} · max ${ms(Math.max(...answers))} | p50 ${ms(pct(health, 0.5))} · max ${ms(Math.max(...health))} | ${before.toFixed(1)} → peak ${peak.toFixed(1)} → ${rssMiB().toFixed(1)} MiB |`,
  );
}

function raw(request: string): Promise<{ ms: number; status: string }> {
  const started = performance.now();
  return new Promise((done) => {
    const client = connect(port, "127.0.0.1", () => client.write(request));
    let answer = "";
    client.on("data", (data) => (answer += data));
    client.on("end", () => done({ ms: performance.now() - started, status: answer.split("\r\n")[0]! }));
  });
}

console.log(
  `${binary}, ${requests} requests per case from ${senders} concurrent senders, NODE_ENV=development\n`,
);
console.log("| body | status | answer | /v1/health meanwhile | server RSS |");
console.log("|---|---|---|---|---|");
// Unauthenticated to a hook route (it needs no bearer token); POST /v1/sessions refuses a
// stranger before reading the body, so there with the master token (its body is read).
const master = { authorization: "Bearer bench" };
for (const size of [60_000, 200_000, 2_000_000]) {
  const kb = `${size / 1000} KB`;
  await hostile(
    `${kb} nested, no secret → POST /v1/hooks/claude/Stop`,
    "/v1/hooks/claude/Stop",
    nested(size),
  );
  await hostile(`${kb} nested, master token → POST /v1/sessions`, "/v1/sessions", nested(size), master);
}
// The scanner's cost on the largest legal body: 2 MiB less a little, read, scanned and parsed
// before the hook receiver refuses its missing secret.
const wide = JSON.stringify({ tool_input: { content: "x".repeat(2 * 1024 * 1024 - 100) } });
await hostile("2 MiB legal JSON → POST /v1/hooks/claude/Stop", "/v1/hooks/claude/Stop", wide);
const members = JSON.stringify({ list: Array.from({ length: 99_000 }, () => 0) });
await hostile("99,000 members (legal) → POST /v1/hooks/claude/Stop", "/v1/hooks/claude/Stop", members);

console.log("\n| Host | status | answer |\n|---|---|---|");
for (const host of ["[zz]", "127.999.999.999", "", "a b"]) {
  const answer = await raw(`GET /v1/health HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`);
  console.log(`| \`${JSON.stringify(host)}\` | ${answer.status} | ${ms(answer.ms)} |`);
}

proc.kill();
const log = await new Response(proc.stderr).text();
const refused = log.split("\n").filter((line) => line.includes("refused")).length;
console.log(
  `\nlog: ${refused} "refused" lines for all of the above; ${log.split("\n").length - 1} lines in all`,
);
killTmuxServer(socket);
rmSync(home, { recursive: true, force: true });
