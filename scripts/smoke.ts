/**
 * Smoke test of a built binary, as a user runs it: from an empty directory, on a free port.
 * `bun scripts/smoke.ts dist/ag` prints "ok - …" / "not ok - …" per check and a count line.
 */
import { cpSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { killTmuxServer } from "../tests/helpers/tmux.ts";

const binary = resolve(process.argv[2] ?? "dist/ag");
const scratch = mkdtempSync(join(tmpdir(), "ag-smoke-"));
const installed = join(scratch, "bin", "ag");
cpSync(binary, installed);
const env = {
  PATH: process.env.PATH ?? "/usr/bin:/bin",
  HOME: join(scratch, "home"),
  SVC_TMUX_SOCKET: `ag-smoke-${process.pid}`,
  SVC_SHUTDOWN_GRACE_MS: "3000",
};
let passed = 0;
let failed = 0;

async function check(name: string, run: () => Promise<unknown> | unknown): Promise<void> {
  try {
    await run();
    passed++;
    console.log(`ok - ${name}`);
  } catch (error) {
    failed++;
    console.log(`not ok - ${name}: ${error instanceof Error ? error.message : String(error)}`);
  }
}

function assert(condition: unknown, message: string): asserts condition {
  if (!condition) throw new Error(message);
}

const version = Bun.spawnSync([installed, "--version"], { cwd: scratch, env });
await check("--version prints a version", () =>
  assert(/^\d+\.\d+\.\d+/.test(version.stdout.toString()), `got ${version.stdout}`),
);

const server = Bun.spawn([installed, "--port", "0", "--host", "127.0.0.1"], {
  cwd: scratch,
  env,
  stderr: "pipe",
});
let log = "";
let url = "";
const reader = (async () => {
  for await (const chunk of server.stderr) {
    log += new TextDecoder().decode(chunk);
    url ||= log.match(/listening on (http:\/\/\S+)/)?.[1] ?? "";
  }
})();
const deadline = Date.now() + 10_000;
while (!url && Date.now() < deadline && server.exitCode === null) await Bun.sleep(20);

await check("the server starts from an empty directory", () => assert(url, `no listening line in:\n${log}`));
await check("GET /v1/health answers ok with a healthy tmux", async () => {
  const health = await (await fetch(`${url}/v1/health`)).json();
  assert(health.status === "ok" && health.tmux.healthy, JSON.stringify(health));
});
await check("the embedded dashboard is served with its CSP", async () => {
  const page = await fetch(`${url}/dashboard/`);
  const csp = page.headers.get("content-security-policy") ?? "";
  assert(page.status === 200, `status ${page.status}`);
  assert(csp.includes("default-src 'self'") && csp.includes("frame-ancestors 'none'"), `CSP: ${csp}`);
  const html = await page.text();
  assert(html.includes("<title>ag dashboard</title>"), "not the dashboard page");
  // The built console is inside the binary too, under the same policy.
  const script = html.match(/src="(app-[0-9a-z]{8}\.js)"/)?.[1];
  assert(script, "the page names no script");
  const app = await fetch(`${url}/dashboard/${script}`);
  assert(app.status === 200 && (await app.text()).length > 10_000, `app.js: status ${app.status}`);
  assert(app.headers.get("content-security-policy") === csp, "app.js without the CSP");
});
await check("an unknown route answers the error envelope", async () => {
  const body = await (await fetch(`${url}/v1/nope`)).json();
  assert(body.code === "NOT_FOUND" && body.statusCode === 404, JSON.stringify(body));
});
await check("SIGTERM shuts down cleanly (exit 0)", async () => {
  server.kill("SIGTERM");
  const code = await Promise.race([server.exited, Bun.sleep(5000).then(() => "timeout")]);
  assert(code === 0, `exit ${code}\n${log}`);
});
if (server.exitCode === null) server.kill("SIGKILL");
await reader.catch(() => {});
// ag leaves its tmux server running on purpose (sessions outlive it): this one is ours to end,
// with its socket file (kill-server leaves it behind).
killTmuxServer(env.SVC_TMUX_SOCKET);
rmSync(scratch, { recursive: true, force: true });
console.log(`smoke checks: ${passed} ok, ${failed} not ok`);
process.exit(failed ? 1 : 0);
