/**
 * Request throughput of the compiled binary on a cheap authenticated route.
 * `bun bench/http.ts [path/to/ag] [seconds] [connections] [master|key]`
 * `key`: the requests carry an API key (SHA-256 lookup in SQLite, scope check, rate limiter with a
 * budget too large to bite) instead of the master token.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { killTmuxServer } from "../tests/helpers/tmux.ts";

const binary = resolve(process.argv[2] ?? "dist/ag");
const seconds = Number(process.argv[3] ?? 5);
const connections = Number(process.argv[4] ?? 50);
const mode = process.argv[5] === "key" ? "key" : "master";
const home = mkdtempSync(join(tmpdir(), "ag-bench-"));
const port = 18_000 + (process.pid % 1000);
const proc = Bun.spawn([binary, "--port", String(port), "--host", "127.0.0.1"], {
  env: {
    PATH: process.env.PATH ?? "",
    HOME: home,
    SVC_AUTH_TOKEN: "bench",
    SVC_LOG_LEVEL: "warn",
    SVC_TMUX_SOCKET: `ag-bench-${process.pid}`,
    SVC_RATE_LIMIT_PER_MIN: "1000000000",
  },
});
const url = `http://127.0.0.1:${port}/v1/sessions/stats`;
const headers = { authorization: "Bearer bench" };
for (let i = 0; i < 500; i++) {
  try {
    if ((await fetch(url, { headers })).ok) break;
  } catch {
    await Bun.sleep(10);
  }
}
if (mode === "key") {
  const created = await fetch(`http://127.0.0.1:${port}/v1/auth/keys`, {
    method: "POST",
    headers: { ...headers, "content-type": "application/json" },
    body: JSON.stringify({ name: "bench", scopes: ["sessions:read"] }),
  });
  headers.authorization = `Bearer ${((await created.json()) as { key: string }).key}`;
}
let done = 0;
let errors = 0;
const until = performance.now() + seconds * 1000;
await Promise.all(
  Array.from({ length: connections }, async () => {
    while (performance.now() < until) {
      const response = await fetch(url, { headers });
      await response.arrayBuffer();
      if (response.ok) done++;
      else errors++;
    }
  }),
);
console.log(
  `GET /v1/sessions/stats (${mode}), ${connections} connections, ${seconds} s: ${Math.round(done / seconds)} req/s, ${errors} errors`,
);
proc.kill("SIGTERM");
await proc.exited;
rmSync(home, { recursive: true, force: true });

// ag leaves its tmux server running on purpose (sessions outlive it): this one is ours to end.
killTmuxServer(`ag-bench-${process.pid}`);
