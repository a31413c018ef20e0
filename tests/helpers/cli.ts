import { join } from "node:path";
import { createEventBus, type EventSession } from "../../src/events/bus.ts";
import type { EventName, EventPayload } from "../../src/events/names.ts";
import { eventRoutes } from "../../src/server/routes/events.ts";
import { systemClock } from "../../src/shared/clock.ts";
import { sampleSession, type TestApp, testApp } from "./app.ts";
import { atRunEnd } from "./cleanup.ts";
import { scriptedReviews } from "./consensus.ts";
import { sampleInput } from "./events.ts";
import { tempDir } from "./temp.ts";

/**
 * The CLI verbs as a person runs them: `bun src/main.ts <verb>` as a real process against the
 * real app (fake tmux, simulated agent screens) served over real HTTP on a free port.
 */

const MAIN = join(import.meta.dir, "..", "..", "src", "main.ts");

/**
 * `supervise`: start the supervisor (and so the fake tmux) for tests that create sessions.
 * `reviews`: serve consensus reviews too, with scripted reviewers (helpers/consensus.ts).
 */
export function serve(
  options: {
    clientTimeoutMs?: number;
    supervise?: boolean;
    reviews?: boolean;
    /** How the agent CLIs' versions and help are read (none installed unless given). */
    agents?: Pick<Parameters<typeof testApp>[0] & {}, "probe" | "help">;
  } = {},
) {
  const bus = createEventBus();
  let ag: TestApp | undefined;
  const reviews = options.reviews ? scriptedReviews(bus, (id) => ag!.sessions.get(id)) : undefined;
  const events = eventRoutes({
    bus,
    sessions: { get: (id) => ag!.sessions.get(id), sees: (owner, id) => ag!.sessions.sees(owner, id) },
    clock: systemClock,
    settings: { idleMs: 15_000, clientTimeoutMs: options.clientTimeoutMs ?? 60_000 },
  });
  ag = testApp({
    bus,
    supervise: options.supervise ?? false,
    plugins: [events, ...(reviews ? [reviews.plugin] : [])],
    ...options.agents,
  });
  const server = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: (request) => ag!.handle(request) });
  atRunEnd(() => server.stop(true));
  machines.set(String(server.port), ag.stateDir);
  const publish = <N extends EventName>(
    name: N,
    fields: { session: EventSession; detail: string; meta?: Partial<EventPayload<N>> },
  ) => bus.publish(sampleInput(name, fields));
  return { ag, port: String(server.port), bus, publish, reviews };
}

/**
 * The state directory of each served app by its port: a CLI run against it (`--port <port>`) runs
 * on its machine, where the state directory holds the token that app generated (as `ag` does on
 * loopback with no token configured), and the CLI reads it there as it does in production.
 */
const machines = new Map<string, string>();

/**
 * `colour: true` leaves NO_COLOR unset: output into a pipe must be plain on its own.
 * `stateDir`: the state directory to share (a served app's); else one of its own in a new HOME.
 */
export function cliEnv(options: { colour?: boolean; stateDir?: string } = {}): Record<string, string> {
  const home = tempDir("ag-cli-home-");
  return {
    PATH: process.env.PATH ?? "/usr/bin:/bin",
    HOME: home,
    SVC_STATE_DIR: options.stateDir ?? join(home, ".svc"),
    ...(options.colour ? {} : { NO_COLOR: "1" }),
  };
}

/**
 * `stdin`: text the command reads on its standard input (none by default). Without `env`, a
 * command naming a served app's port runs on that app's machine (see machines).
 */
export function spawnAg(args: string[], cwd = tempDir(), env = machineEnv(args), stdin?: string) {
  return Bun.spawn([process.execPath, MAIN, ...args], {
    cwd,
    env,
    stdin: stdin === undefined ? "ignore" : new Blob([stdin]),
    stdout: "pipe",
    stderr: "pipe",
  });
}

function machineEnv(args: string[]): Record<string, string> {
  const at = args.indexOf("--port");
  const stateDir = at === -1 ? undefined : machines.get(args[at + 1] ?? "");
  return cliEnv({ stateDir });
}

export async function ag(args: string[], cwd?: string, env?: Record<string, string>, stdin?: string) {
  const proc = spawnAg(args, cwd, env, stdin);
  const [stdout, stderr, exitCode] = await Promise.all([
    new Response(proc.stdout).text(),
    new Response(proc.stderr).text(),
    proc.exited,
  ]);
  return { stdout, stderr, exitCode };
}

/**
 * Runs `ag <args> | true` and answers ag's exit status and what it wrote to stderr. `true` has
 * exited long before ag prints (its start-up takes half a second): every write of ag meets a pipe
 * nobody reads, as after `head -1` has its line.
 */
export async function agIntoClosedPipe(args: string[], env = cliEnv()) {
  // biome-ignore lint/suspicious/noTemplateCurlyInString: bash's, not a template's
  const script = '"$@" | true; echo "${PIPESTATUS[0]}" >&3';
  const proc = Bun.spawn(["bash", "-c", `exec 3>&1; ${script}`, "bash", process.execPath, MAIN, ...args], {
    env,
    stdout: "pipe",
    stderr: "pipe",
  });
  const [status, stderr] = await Promise.all([
    new Response(proc.stdout).text(),
    new Response(proc.stderr).text(),
    proc.exited,
  ]);
  return { exitCode: Number(status.trim()), stderr };
}

export function insert(app: TestApp, overrides: Parameters<typeof sampleSession>[0] = {}) {
  const record = sampleSession(overrides);
  app.repo.insert(record);
  return record;
}
