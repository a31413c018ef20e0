import { mkdirSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { type MockModel, startMockModel } from "../fakes/mock-model.ts";
import { agentEnv, seedAgentHome } from "./agent-home.ts";
import { agentBinaries } from "./agent-versions.ts";
import { AGENT_SEEDS } from "./agents/index.ts";
import { type AgProcess, agEnv, agToken, compiledBinary, freePort, startAg } from "./binary.ts";
import { tempDir } from "./temp.ts";
import { endTmuxServer } from "./tmux.ts";

/**
 * One machine for real-agent tests: the compiled ag, the REAL agent CLIs it drives (`agents`:
 * Claude Code unless the options name others; each linked into the world's bin, the pinned
 * versions unless the options choose others) talking to our mock model, a seeded HOME, a workDir ag has never seen (so ag's own
 * folder-trust step is exercised), a private tmux socket, and a fixed port so ag can restart.
 */
export interface AgentWorld {
  ag: AgProcess;
  mock: MockModel;
  workDir: string;
  env: Record<string, string>;
  api<T = Record<string, unknown>>(
    method: string,
    path: string,
    body?: unknown,
  ): Promise<{ status: number; body: T }>;
  /** Polls GET /v1/sessions/:id until its status is `status` (a test helper, not product code). */
  waitFor(id: string, status: string, timeoutMs?: number): Promise<Record<string, unknown>>;
  restart(signal?: NodeJS.Signals): Promise<void>;
  /** The prompts the model received from the main loop, in order (one per turn, not per tool round). */
  prompts(): string[];
  stop(): Promise<void>;
}

export interface AgentWorldOptions {
  /**
   * The agent CLIs the world's tests drive (ids as in GET /v1/agents): only these must be
   * installed, and one that is not fails the world's start, naming the command that installs it
   * (tests/helpers/agent-versions.ts `agentBinaries`). The others are not linked: a session of
   * one fails as ag says of any CLI not installed. Default: Claude Code only.
   */
  agents?: readonly string[];
  /**
   * Program name → binary, replacing the pinned one linked into the world's bin: another version
   * of an agent CLI (`AgentVersion.binaries()`, tests/helpers/agent-versions.ts), e.g.
   * `{claude: <.tools/claude-code@2.1.328/…/claude>}`.
   */
  binaries?: Record<string, string>;
  /**
   * Called with the world's folder (ag's cwd: a `svc.config.json` there is ag's config) and
   * environment once they are made, before ag starts.
   */
  beforeStart?: (root: string, env: Record<string, string>) => void | Promise<void>;
}

/**
 * Everything of an agent world but the running ag: its folders, the mock model and the
 * environment ag runs in (for tests that start ag their own way, like `ag run`).
 */
export async function prepareAgentWorld(
  extraEnv: Record<string, string> = {},
  options: AgentWorldOptions = {},
) {
  const root = tempDir("ag-world-");
  const home = join(root, "home");
  const workDir = join(root, "work");
  const bin = join(root, "bin");
  for (const dir of [home, workDir, bin]) mkdirSync(dir, { recursive: true });
  seedAgentHome(home, { trust: [] });
  const mock = await startMockModel();
  // The agent CLIs the world drives (given `binaries` replace the pinned ones), each seeded to
  // start at its prompt and talk to the mock. The seeds only write config: all are written.
  const programs: Record<string, string> = {};
  for (const agent of options.agents ?? ["claude"]) Object.assign(programs, agentBinaries(agent));
  const seeded: Record<string, string> = {};
  for (const seed of Object.values(AGENT_SEEDS)) Object.assign(seeded, seed.seed(home, mock.url));
  Object.assign(programs, options.binaries);
  for (const [name, path] of Object.entries(programs)) symlinkSync(path, join(bin, name));
  const port = freePort();
  const base = agEnv();
  const env: Record<string, string> = {
    ...base,
    ...agentEnv(home, mock.url),
    ...seeded,
    PATH: `${bin}:${base.PATH}`,
    SVC_STATE_DIR: join(root, "state"),
    SVC_PORT: String(port),
    SVC_HOST: "127.0.0.1",
    ...extraEnv,
  };
  return { root, workDir, env, mock, port };
}

export async function startAgentWorld(
  extraEnv: Record<string, string> = {},
  options: AgentWorldOptions = {},
): Promise<AgentWorld> {
  const binary = await compiledBinary();
  const { root, workDir, env, mock, port } = await prepareAgentWorld(extraEnv, options);
  await options.beforeStart?.(root, env);
  let ag = await startAg(binary, [], { env, cwd: root });
  const url = `http://127.0.0.1:${port}`;

  const world: AgentWorld = {
    get ag() {
      return ag;
    },
    mock,
    workDir,
    env,
    async api(method, path, body) {
      const response = await fetch(`${url}${path}`, {
        method,
        headers: {
          ...(body === undefined ? {} : { "content-type": "application/json" }),
          authorization: `Bearer ${agToken(env)}`,
        },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const text = await response.text();
      return { status: response.status, body: text ? JSON.parse(text) : undefined };
    },
    async waitFor(id, status, timeoutMs = 30_000) {
      const deadline = Date.now() + timeoutMs;
      let last: Record<string, unknown> = {};
      while (Date.now() < deadline) {
        last = (await world.api("GET", `/v1/sessions/${id}`)).body;
        if (last.status === status) return last;
        await Bun.sleep(100);
      }
      const log = ag.stderr().split("\n").slice(-15).join("\n");
      throw new Error(
        `session ${id}: wanted ${status}, still ${last.status} after ${timeoutMs} ms; ag's last log lines:\n${log}`,
      );
    },
    async restart(signal = "SIGTERM") {
      ag.proc.kill(signal);
      await ag.proc.exited;
      ag = await startAg(binary, [], { env, cwd: root });
    },
    prompts() {
      return mock
        .requests()
        .filter((r) => r.kind === "main" && r.round === 0)
        .map((r) => r.prompt ?? "");
    },
    async stop() {
      await ag.stop();
      // ag leaves its tmux server (and any agent still in it) running on purpose: end it now.
      await endTmuxServer(env.SVC_TMUX_SOCKET!);
      await mock.stop();
    },
  };
  return world;
}

/**
 * A session whose work is a file: its agent writes hello.txt in the world's workDir (the mock's
 * "edit file"), ag approves the Write, and the turn ends. Answers the create's body.
 */
export async function sessionThatWroteHello(
  world: AgentWorld,
  body: Record<string, unknown> = {},
): Promise<Record<string, unknown> & { id: string }> {
  const created = await world.api<Record<string, unknown> & { id: string }>("POST", "/v1/sessions", {
    workDir: world.workDir,
    prompt: "edit file",
    ...body,
  });
  const waiting = await world.waitFor(created.body.id, "permission_prompt", 60_000);
  await world.api("POST", `/v1/sessions/${created.body.id}/approve`, {
    permissionId: (waiting.pendingPermission as { id: string }).id,
  });
  await world.waitFor(created.body.id, "idle", 60_000);
  return created.body;
}
