/**
 * Hook received → bus event: the time from an agent's hook POST leaving the client to the state
 * change being published on ag's event bus, over real HTTP, with the real runtime (SQLite file,
 * real tmux window). `bun bench/hook-latency.ts [rounds]`
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadConfig } from "../src/config/load.ts";
import { startRuntime } from "../src/runtime.ts";
import { createLogger } from "../src/shared/log.ts";
import { killTmuxServer } from "../tests/helpers/tmux.ts";

const rounds = Number(process.argv[2] ?? 500);
const home = mkdtempSync(join(tmpdir(), "ag-bench-hook-"));
const socket = `ag-bench-hook-${process.pid}`;
const { config } = loadConfig({
  env: { SVC_PORT: "0", SVC_HOST: "127.0.0.1", SVC_TMUX_SOCKET: socket, SVC_STATE_DIR: join(home, "state") },
  home,
  cwd: home,
});
const runtime = await startRuntime({ config, logger: createLogger({ level: "warn", json: false }) });

// A window running a stand-in program: the hooks below play the agent's part.
const created = await runtime.sessions.create({ workDir: home, agentCommand: "sleep 3600" });
const id = created.session.id;
const secret = runtime.db
  .query<{ hook_secret: string }, [string]>("SELECT hook_secret FROM sessions WHERE id = ?")
  .get(id)!.hook_secret;

let resolveEvent: ((at: number) => void) | null = null;
runtime.bus.subscribe((event) => {
  if (event.session?.id === id && (event.event === "session.working" || event.event === "session.idle")) {
    resolveEvent?.(performance.now());
  }
});

async function post(event: string, payload: Record<string, unknown>): Promise<number> {
  const seen = new Promise<number>((resolve) => {
    resolveEvent = resolve;
  });
  const started = performance.now();
  await fetch(`${runtime.url}/v1/hooks/claude/${event}`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-svc-hook-secret": secret },
    body: JSON.stringify({ session_id: id, hook_event_name: event, ...payload }),
  });
  return (await seen) - started;
}

// The stand-in never shows the agent's UI, so the session is still "working" (starting): end that first.
await post("Stop", {});
const samples: number[] = [];
for (let i = 0; i < rounds; i++) {
  samples.push(await post("UserPromptSubmit", { prompt: `p${i}`, prompt_id: `bench-${i}` }));
  samples.push(await post("Stop", {}));
}
samples.sort((a, b) => a - b);
const at = (q: number) => samples[Math.min(samples.length - 1, Math.floor(q * samples.length))]!.toFixed(2);
console.log(
  `hook POST → bus event (${samples.length} state changes): p50 ${at(0.5)} ms · p90 ${at(0.9)} ms · p99 ${at(0.99)} ms`,
);

await runtime.sessions.kill(id);
await runtime.drain(100);
runtime.close();
killTmuxServer(socket);
rmSync(home, { recursive: true, force: true });
