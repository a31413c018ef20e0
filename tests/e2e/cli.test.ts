import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { MockModel } from "../fakes/mock-model.ts";
import { prepareAgentWorld } from "../helpers/agent-world.ts";
import { compiledBinary, runAg } from "../helpers/binary.ts";
import { atRunEnd } from "../helpers/cleanup.ts";
import { unframedPrompt } from "../helpers/paste-frame.ts";
import { collect, isAlive } from "../helpers/stream.ts";

/**
 * The session verbs of the compiled binary, end to end: `ag run` on a machine where no server
 * runs starts one in the background and streams the REAL Claude Code's reply (through the mock
 * model); list, read, tail, kill and create then talk to that server. One real agent at a time.
 */

// biome-ignore lint/suspicious/noExplicitAny: response bodies are inspected field by field
type Json = Record<string, any>;

let binary: string;
let env: Record<string, string>;
let root: string;
let workDir: string;
let port: number;
let mock: MockModel;
let sessionId = "";

beforeAll(async () => {
  binary = await compiledBinary();
  ({ env, root, workDir, port, mock } = await prepareAgentWorld());
}, 180_000);

afterAll(async () => {
  await stopBackgroundServer();
  await mock?.stop();
}, 30_000);

const ag = (args: string[]) => runAg(binary, args, { env, cwd: root });

function spawnAg(args: string[]) {
  const proc = Bun.spawn([binary, ...args], { env, cwd: root, stdout: "pipe", stderr: "pipe" });
  atRunEnd(() => {
    if (proc.exitCode === null) proc.kill("SIGKILL");
  });
  return proc;
}

function serverInfo(): { pid: number; baseUrl?: string } | null {
  const file = join(env.SVC_STATE_DIR!, "server.json");
  return existsSync(file) ? JSON.parse(readFileSync(file, "utf8")) : null;
}

/** The server `ag run` started belongs to no test process: end it by the pid it recorded. */
async function stopBackgroundServer(): Promise<void> {
  const pid = serverInfo()?.pid;
  if (!pid || !isAlive(pid)) return;
  process.kill(pid, "SIGTERM");
  for (const deadline = Date.now() + 15_000; isAlive(pid) && Date.now() < deadline; ) await Bun.sleep(100);
  if (isAlive(pid)) process.kill(pid, "SIGKILL");
}

describe("ag's session verbs against a real agent", () => {
  test("ag run with no server running starts one in the background and streams the agent's reply", async () => {
    expect(serverInfo()).toBeNull();
    const config = join(root, ".svc", "config.yaml");
    expect(existsSync(config)).toBe(false);
    const run = await ag(["run", "say hello", "--cwd", workDir]);
    expect(run.stderr).toContain("no ag server answered: started one in the background");
    expect(run.exitCode).toBe(0);
    // It bootstrapped the project's config first: ag init's starter, every setting commented out.
    expect(run.stderr).toContain("created .svc/config.yaml");
    expect(readFileSync(config, "utf8")).toContain("# port: 9100");
    expect(run.stdout).toContain("Hello from the mock model!");
    expect(run.stderr).toContain(`dashboard: http://127.0.0.1:${port}/dashboard/`);
    sessionId = run.stderr.match(/session \S+ \(([0-9a-f-]{36})\)/)![1]!;

    // The server outlived the command, and it logs to the state directory.
    const info = serverInfo()!;
    atRunEnd(() => {
      if (isAlive(info.pid)) process.kill(info.pid, "SIGKILL");
    });
    expect(isAlive(info.pid)).toBe(true);
    expect((await fetch(`http://127.0.0.1:${port}/v1/health`)).status).toBe(200);
    expect(readFileSync(join(env.SVC_STATE_DIR!, "server.log"), "utf8")).toContain("listening on");

    // A second run finds that server instead of starting another.
    const again = await ag(["run", "say hello", "--cwd", workDir, "--no-stream"]);
    expect(again.exitCode).toBe(0);
    expect(again.stderr).not.toContain("started one in the background");
    expect(again.stdout).toMatch(/status\s+\w+ \(reused an idle session\)/);
    expect(again.stdout).toMatch(/prompt\s+delivered/);
  }, 120_000);

  test("ag list and ag read show the session and its conversation", async () => {
    const table = await ag(["list"]);
    expect(table.exitCode).toBe(0);
    expect(table.stdout).toMatch(
      new RegExp(
        // ID NAME AGENT STATUS AGE TOKENS COST BUDGET ("-": none) WORKDIR
        `^${sessionId.slice(0, 8)}\\s+\\S+\\s+claude\\s+\\w+\\s+\\d+[smhd]\\s+\\S+\\s+\\S+\\s+-\\s+${workDir}$`,
        "m",
      ),
    );
    const running = JSON.parse((await ag(["list", "--status", "running", "--json"])).stdout);
    expect(running.map((s: { id: string }) => s.id)).toEqual([sessionId]);

    const read = await ag(["read", sessionId.slice(0, 8)]);
    expect(read.exitCode).toBe(0);
    expect(read.stdout).toMatch(/user · prompt\n {4}say hello/);
    expect(read.stdout).toContain("Hello from the mock model!");
    const page = JSON.parse((await ag(["read", sessionId, "--limit", "1", "--json"])).stdout);
    expect(page.messages).toHaveLength(1);
    expect(page.total).toBeGreaterThanOrEqual(2);
  }, 60_000);

  test("ag send - reads a 30-line message from stdin: delivered, and the model gets it once, whole", async () => {
    const text = Array.from({ length: 30 }, (_, i) => `step ${i + 1}: ${"·".repeat(i)}`).join("\n");
    // The first test's second `ag run --no-stream` returns once its prompt is taken: its turn may
    // still run, and a message typed meanwhile joins that turn instead of starting its own.
    const status = async () =>
      (
        (await (await fetch(`http://127.0.0.1:${port}/v1/sessions/${sessionId}`)).json()) as {
          status: string;
        }
      ).status;
    for (const deadline = Date.now() + 30_000; (await status()) !== "idle" && Date.now() < deadline; )
      await Bun.sleep(100);
    const { stdout, stderr, exitCode } = await runAg(binary, ["send", sessionId, "-"], {
      env,
      cwd: root,
      stdin: text,
    });
    // (stderr shown only when it failed: it carries the error and its [CODE])
    expect({ exitCode, stderr: exitCode ? stderr : "" }).toEqual({ exitCode: 0, stderr: "" });
    expect(stdout).toMatch(/^sent to \S+ \(1 attempt\)$/m);
    // Delivered means the agent took it; the model's request follows. Every prompt that carries
    // any of it is the whole text, once.
    const ours = () =>
      mock
        .requests()
        .filter((r) => r.kind === "main" && r.round === 0 && r.prompt?.includes("step 1:"))
        .map((r) => unframedPrompt(r.prompt ?? ""));
    for (const deadline = Date.now() + 15_000; ours().length === 0 && Date.now() < deadline; )
      await Bun.sleep(100);
    await Bun.sleep(500);
    expect(ours()).toEqual([text]);
  }, 60_000);

  test("ag tail follows the session until ag kill ends it", async () => {
    const tail = spawnAg(["tail", sessionId]);
    const out = collect(tail.stdout);
    await collect(tail.stderr).until("following session");
    const kill = await ag(["kill", sessionId]);
    expect(kill.exitCode).toBe(0);
    expect(kill.stdout).toContain(`killed ${sessionId}`);
    expect(await tail.exited).toBe(0);
    await out.done;
    // The kill is one line, though the server publishes it as session.killed and session.ended.
    const lines = out.text().trimEnd().split("\n");
    expect(lines.filter((l) => /^\d\d:\d\d:\d\d {2}killed /.test(l))).toHaveLength(1);
    expect(lines.at(-1)).toMatch(/^\d\d:\d\d:\d\d {2}killed\s+\S/);
    const twice = await ag(["kill", sessionId]);
    expect(twice.exitCode).toBe(1);
    expect(twice.stderr).toContain("[SESSION_NOT_FOUND]");
  }, 60_000);

  test("ag create starts a session with its brief and reports the delivery", async () => {
    const elsewhere = join(root, "elsewhere");
    mkdirSync(elsewhere);
    const create = await ag(["create", "say hello", "--cwd", elsewhere, "--json"]);
    expect(create.exitCode).toBe(0);
    const created = JSON.parse(create.stdout);
    expect(created).toMatchObject({ workDir: elsewhere, reused: false, promptDelivery: { delivered: true } });
    expect((await ag(["kill", created.id])).exitCode).toBe(0);
  }, 90_000);

  test("ag run --permission-mode plan --model …: the agent runs in plan mode on that model", async () => {
    const model = "claude-sonnet-4-5-20250929";
    const planned = join(root, "planned");
    mkdirSync(planned);
    const run = await ag([
      "run",
      "say hello from plan mode",
      "--cwd",
      planned,
      "--permission-mode",
      "plan",
      "--model",
      model,
    ]);
    expect({ exitCode: run.exitCode, stderr: run.exitCode ? run.stderr : "" }).toEqual({
      exitCode: 0,
      stderr: "",
    });
    expect(run.stdout).toContain("Hello from the mock model!");
    const id = run.stderr.match(/session \S+ \(([0-9a-f-]{36})\)/)![1]!;
    const session = (await (await fetch(`http://127.0.0.1:${port}/v1/sessions/${id}`)).json()) as Json;
    expect(session).toMatchObject({ permissionMode: "plan", model, workDir: planned });
    // The model API heard the name: every turn of the conversation asked for it.
    const mains = mock
      .requests()
      .filter(
        (r) => r.kind === "main" && unframedPrompt(r.prompt ?? "").includes("say hello from plan mode"),
      );
    expect(mains.length).toBeGreaterThan(0);
    expect(new Set(mains.map((r) => r.model))).toEqual(new Set([model]));
    // A word that is no permission mode never reaches the server.
    const wrong = await ag(["run", "say hello", "--cwd", planned, "--permission-mode", "yolo"]);
    expect(wrong.exitCode).toBe(1);
    expect(wrong.stderr).toContain("--permission-mode is one of default, bypassPermissions, plan");
    expect(wrong.stderr).toContain("[USAGE_ERROR]");
    expect((await ag(["kill", id])).exitCode).toBe(0);
  }, 90_000);
});
