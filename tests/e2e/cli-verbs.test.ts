import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { type AgentWorld, startAgentWorld } from "../helpers/agent-world.ts";
import { compiledBinary, runAg } from "../helpers/binary.ts";
import { atRunEnd } from "../helpers/cleanup.ts";
import { collect } from "../helpers/stream.ts";
import { tempDir } from "../helpers/temp.ts";
import { privateSocket } from "../helpers/tmux.ts";

// biome-ignore lint/suspicious/noExplicitAny: response bodies are inspected field by field
type Json = Record<string, any>;

/**
 * The verbs of `ag` as a daily driver, on the compiled binary against the REAL agent CLI (mock
 * model): a session named by its name everywhere, a permission approved and a question answered
 * from the command line, a multi-line message from stdin, `ag review` of its work by a reviewer on
 * the real agent, a terminal attached read-only and detached, `ag run` answering a prompt at a
 * terminal (a tmux pane of the test's own), and `ag stop` leaving the agents for the next start.
 * One world; at most two agents at a time.
 */

let world: AgentWorld;
let binary: string;
let writer = "";

beforeAll(async () => {
  binary = await compiledBinary();
  world = await startAgentWorld();
}, 180_000);

afterAll(async () => {
  await world?.stop();
}, 30_000);

function ag(args: string[], options: { stdin?: string; cwd?: string } = {}) {
  return runAg(binary, args, { env: world.env, cwd: options.cwd ?? world.workDir, stdin: options.stdin });
}

function spawnAg(args: string[]) {
  const proc = Bun.spawn([binary, ...args], {
    cwd: world.workDir,
    env: world.env,
    stdout: "pipe",
    stderr: "pipe",
  });
  atRunEnd(() => {
    if (proc.exitCode === null) proc.kill("SIGKILL");
  });
  return proc;
}

async function eventually<T>(
  what: string,
  check: () => T | Promise<T>,
  ms = 30_000,
): Promise<NonNullable<T>> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await check();
    if (value) return value as NonNullable<T>;
    if (Date.now() > deadline) throw new Error(`${what}: not within ${ms} ms`);
    await Bun.sleep(100);
  }
}

/** A tmux server of the test's own (a "person's terminal"), running `command` in a pane. */
function terminal(command: string) {
  const socket = privateSocket();
  // A person's terminal speaks UTF-8: without it tmux draws the agent's box lines as ASCII.
  const env = { ...world.env, LANG: "C.UTF-8" };
  const run = (...args: string[]) =>
    Bun.spawnSync(["tmux", "-L", socket, "-f", "/dev/null", ...args], { env, stderr: "pipe" });
  const started = run("new-session", "-d", "-s", "person", "-x", "160", "-y", "48", "sh", "-c", command);
  if (started.exitCode !== 0) throw new Error(`tmux: ${started.stderr.toString()}`);
  return {
    screen: () => run("capture-pane", "-p", "-J", "-S", "-200", "-t", "person").stdout.toString(),
    keys: (...keys: string[]) => run("send-keys", "-t", "person", ...keys),
  };
}

const sh = (text: string) => `'${text.replaceAll("'", "'\\''")}'`;
const agTmux = (...args: string[]) =>
  Bun.spawnSync(["tmux", "-L", world.env.SVC_TMUX_SOCKET!, ...args], { stderr: "pipe" }).stdout.toString();

describe("ag as a daily driver, on the real agent", () => {
  test("ag create 'edit file' → ag list shows what it waits for → ag approve <name> writes the file", async () => {
    const create = await ag(["create", "edit file", "--name", "writer", "--json"]);
    expect(create.exitCode).toBe(0);
    writer = JSON.parse(create.stdout).id;
    await world.waitFor(writer, "permission_prompt", 60_000);

    const list = await ag(["list"]);
    expect(list.stdout).toMatch(
      /^ID\s+NAME\s+AGENT\s+STATUS\s+AGE\s+TOKENS\s+COST\s+BUDGET\s+WORKDIR\s+WAITS FOR$/m,
    );
    expect(list.stdout).toMatch(
      new RegExp(
        `^${writer.slice(0, 8)}\\s+writer\\s+claude\\s+permission_prompt\\s.*Write: ${world.workDir}/hello\\.txt`,
        "m",
      ),
    );

    const approve = await ag(["approve", "writer"]);
    expect(approve.exitCode).toBe(0);
    expect(approve.stdout).toContain(`approved Write: ${world.workDir}/hello.txt in writer`);
    const file = join(world.workDir, "hello.txt");
    await eventually("hello.txt written", () => existsSync(file));
    expect(readFileSync(file, "utf8")).toBe("hello from the mock\n");
    await world.waitFor(writer, "idle", 30_000);

    // The transcript's last lines may come a moment after the agent is idle.
    const read = await eventually("the reply in ag read", async () => {
      const result = await ag(["read", "writer"]);
      return result.stdout.includes("Wrote hello.txt.") ? result : null;
    });
    expect(read.exitCode).toBe(0);
    expect(read.stdout).toMatch(/user · prompt\n {4}edit file/);
    expect(read.stdout).not.toMatch(/· system\n(?! {4})/);
  }, 120_000);

  test("ag send <id> - : a multi-line stdin text reaches the model as one message", async () => {
    const text = "Please read these two lines:\nthe second line stays in the same message";
    const send = await ag(["send", writer.slice(0, 8), "-"], { stdin: `${text}\n` });
    expect(send.exitCode).toBe(0);
    expect(send.stdout).toBe("sent to writer (1 attempt)\n");
    await world.waitFor(writer, "idle", 30_000);
    const prompts = world.prompts();
    expect(prompts.at(-1)).toContain(text);
    expect(prompts.filter((p) => p.includes("the second line"))).toHaveLength(1);
  }, 60_000);

  test("ag answer <id> 2 picks the second option of the question; ag tail shows it once, with its options", async () => {
    const tail = spawnAg(["tail", "writer"]);
    const out = collect(tail.stdout);
    await collect(tail.stderr).until("following session writer");
    const send = await ag(["send", "writer", "ask me"]);
    expect(send.exitCode).toBe(0);
    const asking = await world.waitFor(writer, "asking", 30_000);
    expect((asking.pendingPermission as Json).options).toHaveLength(2);

    const answer = await ag(["answer", writer, "2"]);
    expect(answer.exitCode).toBe(0);
    expect(answer.stdout).toMatch(/answered Which color should the button be\? .* in writer.*: 2\. Blue$/m);
    await world.waitFor(writer, "idle", 30_000);
    const page = JSON.parse((await ag(["read", "writer", "--json"])).stdout);
    const results = (page.messages as Json[]).filter((m) => m.kind === "tool_result").map((m) => m.text);
    expect(results.some((t: string) => t.includes('="Blue"'))).toBe(true);

    await out.until("Thanks for answering");
    tail.kill("SIGINT");
    expect(await tail.exited).toBe(0);
    await out.done;
    const lines = out.text().trimEnd().split("\n");
    const question = lines.filter((l) =>
      / question +Which color should the button be\? — 1\. Red · 2\. Blue/.test(l),
    );
    expect(question).toHaveLength(1);
    expect(lines.some((l) => / tool +AskUserQuestion: Which color should the button be\?/.test(l))).toBe(
      true,
    );
    // One line per change: no change is printed twice in a row under its two names.
    const changes = lines.map((l) => l.slice(10)).filter((l) => /^(working|idle|question) /.test(l));
    for (let i = 1; i < changes.length; i++) expect(changes[i]).not.toBe(changes[i - 1]);
    expect(out.text()).not.toMatch(/status\.|session\./);
  }, 90_000);

  test("ag review writer -c …: a reviewer on the real agent; the verdict after the wait, exit 0 on approve", async () => {
    const brief = "independent reviewers";
    world.mock.addRules([
      {
        name: "review",
        match: brief,
        times: 1,
        reply: {
          text: "CRITERION 1: PASS — hello.txt greets\nCRITERION 2: FAIL — no README\nVERDICT: APPROVE",
        },
      },
    ]);
    // One reviewer: with writer, two agents at a time.
    const review = await ag([
      "review",
      "writer",
      "-c",
      "hello.txt greets",
      "-c",
      "a README",
      "--reviewers",
      "1",
    ]);
    expect(`${review.exitCode}: ${review.stderr}`).toStartWith("0: ");
    expect(review.stderr).toMatch(/^review [0-9a-f-]{36} of writer: 1 reviewer, 2 criteria$/m);
    expect(review.stdout).toStartWith("approve: 1 of 1 reviewers agree · agreement 100%\n");
    expect(review.stdout).toMatch(/^2\s+fail\s+0\s+1\s+100%\s+a README$/m);
    expect(review.stdout).toMatch(/^1\s+done\s+approve\s+\S+\s+FAIL 2: no README$/m);
    const id = review.stdout.match(/^ {2}review\s+([0-9a-f-]{36})$/m)![1]!;
    const record = (await world.api<Json>("GET", `/v1/consensus/${id}`)).body;
    expect(record).toMatchObject({ sessionId: writer, status: "completed", verdict: "approve" });
    const given = world.mock.requests().filter((r) => r.prompt?.includes(brief));
    expect(given[0]!.prompt).toContain("2. a README");
    // The reviewer's window is gone: writer is the only agent again.
    const reviewer = (await world.api<Json>("GET", `/v1/sessions/${record.reviewers[0].sessionId}`)).body;
    expect(reviewer.status).toBe("killed");
  }, 120_000);

  test("a prompt for a directory with an idle session goes to it, and ag says so in one line", async () => {
    const again = await ag(["create", "say hello"]);
    expect(again.exitCode).toBe(0);
    expect(again.stderr).toContain(
      `reused the idle session writer (${writer.slice(0, 8)}) in ${world.workDir}; --new starts a fresh one`,
    );
    await world.waitFor(writer, "idle", 30_000);
  }, 60_000);

  test("--new starts a fresh session beside an idle one", async () => {
    const fresh = await ag(["create", "say hello", "--new", "--json"]);
    expect(fresh.exitCode).toBe(0);
    const created = JSON.parse(fresh.stdout);
    expect(created).toMatchObject({ reused: false, workDir: world.workDir });
    expect(created.id).not.toBe(writer);
    expect((await ag(["kill", created.id])).exitCode).toBe(0);
  }, 90_000);

  test("ag run --new twice in one directory: two sessions, neither the idle one", async () => {
    const dir = tempDir("ag-run-new-");
    const ids: string[] = [];
    for (let i = 0; i < 2; i++) {
      const run = await ag(["run", "say hello", "--new", "--no-stream", "--cwd", dir]);
      expect(run.exitCode).toBe(0);
      ids.push(run.stdout.match(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/)![0]);
      await world.waitFor(ids[i]!, "idle", 30_000);
    }
    expect(new Set(ids).size).toBe(2);
    const inDir = (await world.api<Json[]>("GET", "/v1/sessions")).body.filter((s) => s.workDir === dir);
    expect(inDir.map((s) => s.id).sort()).toEqual([...ids].sort());
    for (const id of ids) expect((await ag(["kill", id])).exitCode).toBe(0);
  }, 120_000);

  test("ag attach --read-only <id> in a terminal shows the agent's screen; detaching leaves it running", async () => {
    const paneId = (await world.api<Json>("GET", `/v1/sessions/${writer}/health`)).body.pane.paneId as string;
    const person = terminal(`${sh(binary)} attach --read-only ${writer}; echo "ag-exit=$?"; sleep 600`);
    // What the agent's own pane shows is what the person sees.
    await eventually("the agent's screen in the person's terminal", () => {
      const theirs = agTmux("capture-pane", "-p", "-t", paneId)
        .split("\n")
        .map((l) => l.trim())
        .filter((l) => l.length > 10);
      const ours = person.screen();
      return theirs.length >= 3 && theirs.every((l) => ours.includes(l));
    });
    expect(person.screen()).toContain("? for shortcuts");
    const clients = agTmux("list-clients", "-F", "#{client_name} #{client_readonly}").trim().split("\n");
    const attached = clients.filter((c) => c.endsWith(" 1"));
    expect(attached).toHaveLength(1);
    // Keys typed there reach no agent: the client is read-only.
    person.keys("echo typed-into-the-agent", "Enter");
    await Bun.sleep(500);
    expect(agTmux("capture-pane", "-p", "-t", paneId)).not.toContain("typed-into-the-agent");

    agTmux("detach-client", "-t", attached[0]!.split(" ")[0]!);
    const screen = await eventually("ag attach to end", () => {
      const text = person.screen();
      return text.includes("ag-exit=") ? text : null;
    });
    expect(screen).toContain("ag-exit=0");
    expect(screen).toContain("detached from writer; it keeps running");
    const health = (await world.api<Json>("GET", `/v1/sessions/${writer}/health`)).body;
    expect(health).toMatchObject({ status: "idle", alive: true });
    expect((await ag(["send", "writer", "say hello"])).exitCode).toBe(0);
    await world.waitFor(writer, "idle", 30_000);
  }, 90_000);

  test("ag run at a terminal offers the permission right there: y approves it", async () => {
    const dir = join(world.workDir, "..", "interactive");
    mkdirSync(dir, { recursive: true });
    const person = terminal(`cd ${sh(dir)} && ${sh(binary)} run "edit file"; echo "ag-exit=$?"; sleep 600`);
    await eventually(
      "the question",
      () => person.screen().includes(`allow Write: ${dir}/hello.txt?`),
      60_000,
    );
    expect(person.screen()).toContain("[y]es · [n]o · [a]ttach to its terminal · [Enter] later");
    person.keys("y");
    const screen = await eventually(
      "ag run to end",
      () => {
        const text = person.screen();
        return text.includes("ag-exit=") ? text : null;
      },
      60_000,
    );
    expect(screen).toContain(`approved Write: ${dir}/hello.txt in`);
    expect(screen).toContain("Wrote hello.txt.");
    expect(screen).toContain("ag-exit=0");
    expect(readFileSync(join(dir, "hello.txt"), "utf8")).toBe("hello from the mock\n");
    const id = screen.match(/session \S+ \(([0-9a-f-]{36})\)/)![1]!;
    expect((await ag(["kill", id])).exitCode).toBe(0);
  }, 120_000);

  test("ag run at a terminal spins while a slow answer has not arrived, and erases the spinner for it", async () => {
    // Claude Code writes a text block down once it is whole: 4 s of nothing on screen but this.
    world.mock.addRules([
      { name: "slow", match: "answer slowly", reply: { text: "The slow answer.", delay_ms: 4000 } },
    ]);
    const dir = join(world.workDir, "..", "slow");
    mkdirSync(dir, { recursive: true });
    const person = terminal(
      `cd ${sh(dir)} && ${sh(binary)} run "answer slowly"; echo "ag-exit=$?"; sleep 600`,
    );
    await eventually("the spinner", () => person.screen().includes("waiting for claude's answer…"), 60_000);
    const screen = await eventually(
      "ag run to end",
      () => {
        const text = person.screen();
        return text.includes("ag-exit=") ? text : null;
      },
      60_000,
    );
    expect(screen).toContain("The slow answer.");
    expect(screen).toContain("ag-exit=0");
    // Erased, not left behind on the answer's line or after it.
    expect(screen).not.toContain("waiting for claude's answer");
    expect(screen).not.toContain("is still working");
    const id = screen.match(/session \S+ \(([0-9a-f-]{36})\)/)![1]!;
    expect((await ag(["kill", id])).exitCode).toBe(0);
  }, 120_000);

  test("ag run without a terminal says how to answer: ag approve <id>", async () => {
    const dir = join(world.workDir, "..", "scripted");
    mkdirSync(dir, { recursive: true });
    const proc = Bun.spawn([binary, "run", "edit file", "--cwd", dir], {
      cwd: dir,
      env: world.env,
      stdout: "pipe",
      stderr: "pipe",
    });
    atRunEnd(() => {
      if (proc.exitCode === null) proc.kill("SIGKILL");
    });
    const err = collect(proc.stderr);
    const out = collect(proc.stdout);
    await err.until("waiting for permission: Write:", 60_000);
    const hint = err.text().match(/\(ag approve (\w{8}) or ag reject \1\)/)!;
    expect(hint).not.toBeNull();
    expect((await ag(["approve", hint[1]!])).exitCode).toBe(0);
    expect(await proc.exited).toBe(0);
    await out.done;
    expect(out.text()).toContain("Wrote hello.txt.");
    await err.done;
    // No spinner into a pipe: not a frame, not an erased line.
    expect(err.text()).not.toContain("waiting for claude's answer");
    expect(err.text()).not.toContain("\u001b[2K");
    expect((await ag(["kill", hint[1]!])).exitCode).toBe(0);
  }, 120_000);

  test("ag stop: the server stops, the agent's window stays, and the next start picks the session up", async () => {
    const stop = await ag(["stop"]);
    expect(stop.exitCode).toBe(0);
    expect(stop.stdout).toMatch(/^stopped the ag server \(pid \d+\)$/m);
    expect(stop.stderr).toContain("1 agent session keeps running in tmux");
    expect(await world.ag.proc.exited).toBe(0);
    expect(agTmux("list-windows", "-a", "-F", "#{@svc_session_id}")).toContain(writer);
    const again = await ag(["stop"]);
    expect(again.exitCode).toBe(0);
    expect(again.stdout).toContain("no ag server runs");

    await world.restart();
    const session = await world.waitFor(writer, "idle", 30_000);
    expect(session.name).toBe("writer");
    const send = await ag(["send", "writer", "say hello"]);
    expect(send.exitCode).toBe(0);
    await world.waitFor(writer, "idle", 30_000);
    expect((await ag(["read", "writer"])).stdout).toContain("Hello from the mock model!");
  }, 120_000);
});
