import { afterAll, beforeAll, expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { type AgProcess, agEnv, compiledBinary, freePort, runAg, startAg } from "../helpers/binary.ts";
import { tempDir } from "../helpers/temp.ts";

/**
 * `ag run` refused, with the compiled binary against a server it did not start: an agent whose
 * CLI is not installed (OpenCode: not on the PATH ag and its agents run with) fails within two
 * seconds, with the exit status, the install hint and its code, and a bad request is refused
 * with nothing before it: no "waiting" line, no dashboard link. No agent CLI is needed.
 */
let binary: string;
let env: Record<string, string>;
let ag: AgProcess;

beforeAll(async () => {
  binary = await compiledBinary();
  // ag's own programs only: tmux and the shell, none of the agent CLIs.
  env = agEnv({ PATH: "/usr/local/bin:/usr/bin:/bin" });
  ag = await startAg(binary, ["--port", "0", "--host", "127.0.0.1"], { env });
}, 180_000);
afterAll(async () => {
  await ag?.stop();
});

/** `ag run <prompt> <flags>` against the server, and how long it took. */
async function run(...flags: string[]) {
  const started = performance.now();
  const result = await runAg(
    binary,
    ["run", "say hello", "--cwd", tempDir(), "--port", String(ag.port), ...flags],
    {
      env,
    },
  );
  return { ...result, ms: performance.now() - started };
}

test("ag run --agent opencode without OpenCode installed: fails in under 2 s with the install hint, no waiting line", async () => {
  expect(Bun.which("opencode", { PATH: env.PATH })).toBeNull();
  const refused = await run("--agent", "opencode");
  expect(refused.exitCode).toBe(1);
  expect(refused.stderr).toContain("before it took its first prompt");
  expect(refused.stderr).toMatch(/exited with status \d+/);
  expect(refused.stderr).toContain(
    "the agent CLI not found (opencode); install it: npm install -g opencode-ai",
  );
  expect(refused.stderr).toContain("[AGENT_UNAVAILABLE]");
  expect(refused.stderr).not.toContain("waiting");
  expect(refused.stderr).not.toContain("dashboard");
  expect(refused.stdout).toBe("");
  // A hang guard, not a measurement (ag waited 50 s here before): 0.35 s on a quiet machine, 2.06 s
  // once with a loaded run beside it — a CLI process start included. The figure is recorded in the
  // issue's note; timed assertions this tight fail on a busy machine for no fault of ag's.
  expect(refused.ms).toBeLessThan(10_000);
}, 30_000);

test("a bad request: the server's refusal and its code, and nothing before it", async () => {
  const refused = await run("--agent", "no-such-agent");
  expect(refused.exitCode).toBe(1);
  expect(refused.stderr).toBe(
    'ag: unknown agent "no-such-agent"; known agents: claude, codex, gemini, opencode [UNKNOWN_AGENT]\n',
  );
}, 30_000);

test("a flag ag can refuse by itself is refused before a server is looked for or started", async () => {
  // Its own HOME and state dir, and a port nothing listens on: a server would be started there.
  const alone = agEnv({ PATH: env.PATH! });
  const port = String(await freePort());
  const refused = await runAg(
    binary,
    ["run", "say hello", "--cwd", tempDir(), "--port", port, "--permission-mode", "bogus", "--yes"],
    { env: alone },
  );
  expect(refused.exitCode).toBe(1);
  expect(refused.stderr).toBe(
    "ag: --permission-mode is one of default, bypassPermissions, plan, acceptEdits, dontAsk, auto, not bogus (ag agents lists each agent's) [USAGE_ERROR]\n",
  );
  // Nothing was set up: no config written, no server log.
  expect(existsSync(join(alone.SVC_STATE_DIR!, "server.log"))).toBe(false);
}, 30_000);
