import { describe, expect, test } from "bun:test";
import { copyFileSync } from "node:fs";
import { join } from "node:path";
import { ag, agIntoClosedPipe, cliEnv, insert, serve, spawnAg } from "../helpers/cli.ts";
import { simulateAgents } from "../helpers/simulated-agent.ts";
import { collect } from "../helpers/stream.ts";
import { tempDir } from "../helpers/temp.ts";

/** The CLI verbs as a person runs them, against the real app over HTTP (tests/helpers/cli.ts). */
const SAMPLE = join(import.meta.dir, "..", "fixtures", "transcripts", "sample.jsonl");

describe("ag status", () => {
  test("version, status, uptime, port and session counts; --json adds the url and port", async () => {
    const { port } = serve();
    const human = await ag(["status", "--port", port]);
    expect(human.exitCode).toBe(0);
    expect(human.stdout).toStartWith("ag 0.0.0-test — ok\n");
    expect(human.stdout).toMatch(new RegExp(`^ {2}port\\s+${port}$`, "m"));
    expect(human.stdout).toMatch(/^ {2}uptime\s+1s$/m);
    expect(human.stdout).toMatch(/^ {2}sessions\s+0 active \/ 0 total$/m);
    const json = JSON.parse((await ag(["status", "--json", "--port", port])).stdout);
    expect(json).toMatchObject({
      status: "ok",
      version: "0.0.0-test",
      port: Number(port),
      url: `http://127.0.0.1:${port}`,
    });
  });
});

describe("output for people and for scripts", () => {
  test("no colour into a pipe even without NO_COLOR; help has no trailing blanks", async () => {
    const { ag: app, port } = serve();
    const dir = tempDir();
    const transcriptPath = join(dir, "t.jsonl");
    copyFileSync(SAMPLE, transcriptPath);
    const session = insert(app, { status: "crashed", transcriptPath, workDir: dir });
    insert(app, { status: "idle" });
    const env = cliEnv({ colour: true });
    const runs = [["list"], ["read", session.id], ["--help"], ["run", "--help"]];
    // Processes that change nothing: side by side (each is ~0.6 s of start-up).
    const results = await Promise.all(runs.map((args) => ag([...args, "--port", port], undefined, env)));
    for (const [i, args] of runs.entries()) {
      const result = results[i]!;
      expect(result.exitCode).toBe(0);
      expect(result.stdout.length).toBeGreaterThan(0);
      expect(result.stdout).not.toContain("\u001b[");
      if (args.includes("--help")) expect(result.stdout).not.toMatch(/ $/m);
    }
    // --stream is the default; --no-stream says what it does instead.
    const help = (await ag(["run", "--help"], undefined, env)).stdout;
    expect(help).toMatch(/^ {2}--no-stream +Create the session, print it and return/m);
    expect(help).not.toMatch(/^ +--stream/m);
  });

  test("a reader that stops reading (`| head -1`) ends the command quietly with status 0", async () => {
    const { ag: app, port } = serve();
    const dir = tempDir();
    const transcriptPath = join(dir, "t.jsonl");
    copyFileSync(SAMPLE, transcriptPath);
    const session = insert(app, { status: "crashed", transcriptPath, workDir: dir });
    for (let i = 0; i < 5; i++) insert(app, { status: "idle" });
    const runs = [["list", "--all"], ["read", session.id], ["status"], ["list", "--all", "--json"]];
    const results = await Promise.all(runs.map((args) => agIntoClosedPipe([...args, "--port", port])));
    for (const result of results) expect(result).toEqual({ exitCode: 0, stderr: "" });
  });
});

describe("errors", () => {
  test("every error carries its code, the argument parser's too", async () => {
    const { port } = serve();
    const missing = await ag(["read", "--port", port]);
    expect(missing.exitCode).toBe(1);
    expect(missing.stderr).toBe("ag: Missing required positional argument: SESSION [USAGE_ERROR]\n");
  });
});

describe("ag agents", () => {
  test("version, whether it is verified (yes / no / ?) and the flags its help lacks; --json is the API's answer", async () => {
    const { ag: app, port } = serve({
      agents: {
        probe: async (command) =>
          command === "claude" ? "9.9.9 (Claude Code)" : command === "codex" ? "codex-cli 0.169.0" : null,
        help: async (command) =>
          command === "claude"
            ? "  --session-id  --permission-mode  --resume  --fork-session\n"
            : "  --no-daemon --dangerously-bypass-hook-trust --sandbox --ask-for-approval\n  --dangerously-bypass-approvals-and-sandbox --approve-for-me -c\n",
      },
    });
    await app.agents.probeClis();
    const human = await ag(["agents", "--port", port]);
    expect(human.exitCode).toBe(0);
    expect(human.stdout).toMatch(/^AGENT\s+NAME\s+VERSION\s+VERIFIED\s+DRIVERS/m);
    expect(human.stdout).toMatch(
      /^claude \(default\)\s+Claude Code\s+9\.9\.9\s+no \(lacks --settings\)\s+tmux, acp/m,
    );
    expect(human.stdout).toMatch(/^codex\s+Codex CLI\s+0\.169\.0\s+yes\s+tmux\s/m);
    expect(human.stdout).toMatch(
      /^gemini\s+Gemini CLI\s+not installed: npm install -g @google\/gemini-cli\s+\?\s/m,
    );
    const json = JSON.parse((await ag(["agents", "--json", "--port", port])).stdout);
    expect(json.find((a: { id: string }) => a.id === "claude")).toMatchObject({
      version: "9.9.9",
      verified: false,
      probe: { missingFlags: ["--settings"] },
    });
  });
});

describe("ag list", () => {
  test("an aligned table with short ids; --status filters; --json is the API's answer", async () => {
    const { ag: app, port } = serve();
    const idle = insert(app, { name: "alpha", status: "idle", workDir: "/work/alpha" });
    const done = insert(app, { name: "beta", status: "completed", workDir: "/work/beta" });
    const waiting = insert(app, {
      name: "gamma",
      status: "permission_prompt",
      workDir: "/work/gamma",
      pendingPermission: { id: "perm-1", kind: "tool", tool: "Bash", detail: "rm -rf build" },
      tokenUsage: { input: 1200, output: 300, cacheRead: 0, cacheCreation: 0 },
    });

    // By default the running sessions; what each waits for comes last.
    const table = await ag(["list", "--port", port]);
    expect(table.exitCode).toBe(0);
    const lines = table.stdout.trimEnd().split("\n");
    expect(lines[0]).toMatch(
      /^ID\s+NAME\s+AGENT\s+STATUS\s+AGE\s+TOKENS\s+COST\s+BUDGET\s+WORKDIR\s+WAITS FOR$/,
    );
    expect(lines).toHaveLength(3);
    const row = lines.find((l) => l.startsWith(idle.id.slice(0, 8)))!;
    expect(row).toMatch(/^\w{8}\s+alpha\s+claude\s+idle\s+\d+[smhd]\s+0\s+-\s+-\s+\/work\/alpha$/);
    const busy = lines.find((l) => l.startsWith(waiting.id.slice(0, 8)))!;
    expect(busy).toMatch(
      /permission_prompt\s+\d+[smhd]\s+1\.5k\s+-\s+-\s+\/work\/gamma\s+Bash: rm -rf build$/,
    );
    expect(table.stdout).not.toContain(done.id.slice(0, 8));
    // Columns line up: every row's STATUS starts where the header's does.
    const at = lines[0]!.indexOf("STATUS");
    for (const line of lines.slice(1)) expect(line.slice(at)).toMatch(/^(idle|permission_prompt)\s/);
    expect(table.stdout).not.toContain("\u001b[");

    const all = await ag(["list", "--all", "--port", port]);
    expect(all.stdout.trimEnd().split("\n")).toHaveLength(4);
    expect(all.stdout).toContain(done.id.slice(0, 8));

    const filtered = await ag(["list", "--status", "completed", "--json", "--port", port]);
    expect(JSON.parse(filtered.stdout).map((s: { id: string }) => s.id)).toEqual([done.id]);
    const none = await ag(["list", "--status", "working", "--port", port]);
    expect(none.stdout).toBe("no working sessions\n");

    const bad = await ag(["list", "--status", "sleepy", "--port", port]);
    expect(bad.exitCode).toBe(1);
    expect(bad.stderr).toContain("[USAGE_ERROR]");
  });
});

describe("ag read", () => {
  test("page 1 is the newest messages; later pages go back; --json carries the paging", async () => {
    const { ag: app, port } = serve();
    const dir = tempDir();
    const transcriptPath = join(dir, "t.jsonl");
    copyFileSync(SAMPLE, transcriptPath);
    const session = insert(app, { status: "completed", transcriptPath, workDir: dir });

    const first = JSON.parse(
      (await ag(["read", session.id, "--limit", "10", "--json", "--port", port])).stdout,
    );
    const total = first.total as number;
    expect(total).toBeGreaterThan(20);
    expect(first).toMatchObject({ page: 1, limit: 10, pages: Math.ceil(total / 10) });
    expect(first.messages.map((m: { id: number }) => m.id)).toEqual(range(total - 9, total));

    const second = JSON.parse(
      (await ag(["read", session.id.slice(0, 8), "--page", "2", "--limit", "10", "--json", "--port", port]))
        .stdout,
    );
    expect(second.messages.map((m: { id: number }) => m.id)).toEqual(range(total - 19, total - 10));

    const human = await ag([
      "read",
      session.id,
      "--page",
      String(first.pages),
      "--limit",
      "10",
      "--port",
      port,
    ]);
    expect(human.exitCode).toBe(0);
    expect(human.stdout).toContain(`page ${first.pages} of ${first.pages}`);
    expect(human.stdout).toMatch(/^#1 .*user · prompt\n {4}say hello$/m);

    const beyond = await ag([
      "read",
      session.id,
      "--page",
      String(first.pages + 1),
      "--limit",
      "10",
      "--port",
      port,
    ]);
    expect(beyond.stdout).toBe(`no page ${first.pages + 1}: ${first.pages} in all\n`);
  });

  test("an unknown session or a bad --limit: exit 1 with the code", async () => {
    const { port } = serve();
    const missing = await ag(["read", crypto.randomUUID(), "--port", port]);
    expect(missing.exitCode).toBe(1);
    expect(missing.stderr).toContain("[SESSION_NOT_FOUND]");
    const limit = await ag(["read", "abc", "--limit", "201", "--port", port]);
    expect(limit.exitCode).toBe(1);
    expect(limit.stderr).toContain("--limit expects a whole number from 1 to 200");
  });
});

describe("ag create and ag kill", () => {
  test("create waits for delivery and shows the session; kill ends it; a second kill fails", async () => {
    const { ag: app, port } = serve({ supervise: true });
    simulateAgents(app);
    const work = tempDir();
    const created = await ag(["create", "fix the build", "--cwd", work, "--name", "builder", "--port", port]);
    expect(created.exitCode).toBe(0);
    expect(created.stdout).toMatch(/prompt\s+delivered \(1 attempt\)$/m);
    // The wait has its spinner at a terminal only: into a pipe, no "waiting" line stands before
    // the answer (it would stand before a refusal too).
    expect(created.stderr).toBe("");
    expect(created.stdout).toMatch(/workDir\s+.*ag-test-/);
    expect(created.stdout).toMatch(new RegExp(`dashboard\\s+http://127\\.0\\.0\\.1:${port}/dashboard/`));
    const id = created.stdout.match(/id\s+([0-9a-f-]{36})/)![1]!;
    expect(app.repo.get(id)).toMatchObject({ name: "builder", workDir: work });

    const killed = await ag(["kill", id.slice(0, 8), "--port", port]);
    expect(killed.exitCode).toBe(0);
    expect(killed.stdout).toBe(`killed ${id} (builder)\n`);
    expect(app.repo.get(id)!.status).toBe("killed");
    const again = await ag(["kill", id, "--port", port]);
    expect(again.exitCode).toBe(1);
    expect(again.stderr).toContain("[SESSION_NOT_FOUND]");

    const other = JSON.parse((await ag(["create", "hi", "--json", "--cwd", work, "--port", port])).stdout);
    const json = await ag(["kill", other.id, "--json", "--port", port]);
    expect(json.exitCode).toBe(0);
    expect(JSON.parse(json.stdout)).toMatchObject({ id: other.id, status: "killed" });
  });

  test("a prompt the agent never takes: the session is shown, and the exit code is 1", async () => {
    const { ag: app, port } = serve({ supervise: true });
    simulateAgents(app, { acceptEnter: () => false });
    const created = await ag(["create", "hello", "--json", "--port", port], tempDir());
    expect(created.exitCode).toBe(1);
    expect(JSON.parse(created.stdout).promptDelivery).toEqual({
      delivered: false,
      attempts: 3,
      reason: "the prompt stayed in the input box",
    });
    expect(created.stderr).toContain("did not take the prompt (3 attempts)");
  });
});

describe("ag tail", () => {
  test("one line per event until the session ends, across the server closing the stream", async () => {
    // The server drops a stream after 300 ms without events: tail must come back where it left.
    const { ag: app, port, publish } = serve({ clientTimeoutMs: 300 });
    const record = insert(app, { name: "tailed", status: "working" });
    const session = { id: record.id, name: record.name, workDir: record.workDir };
    const proc = spawnAg(["tail", record.id, "--port", port]);
    const out = collect(proc.stdout);
    const err = collect(proc.stderr);
    await err.until("following session tailed");
    publish("message.assistant", { session, detail: "first\nline" });
    await out.until("first ⏎ line");
    await err.until("reconnecting: the server closed the stream");
    publish("status.idle", { session, detail: "working → idle" });
    publish("session.ended", { session, detail: "killed", meta: { reason: "killed" } });
    expect(await proc.exited).toBe(0);
    await out.done;
    const lines = out.text().trimEnd().split("\n");
    expect(lines.map((l) => l.split(/\s+/)[1])).toEqual(["assistant", "idle", "killed"]);
    expect(lines[0]).toMatch(/^\d\d:\d\d:\d\d {2}assistant\s+first ⏎ line$/);
  });

  test("Ctrl+C stops it with exit 0; --json gives one object per line; an ended session ends it at once", async () => {
    const { ag: app, port, publish } = serve();
    const record = insert(app, { status: "idle" });
    const session = { id: record.id, name: record.name, workDir: record.workDir };
    const proc = spawnAg(["tail", record.id, "--json", "--port", port]);
    const out = collect(proc.stdout);
    await collect(proc.stderr).until("following session");
    publish("status.working", { session, detail: "idle → working" });
    await out.until("status.working");
    expect(JSON.parse(out.text())).toMatchObject({
      event: "status.working",
      session,
      detail: "idle → working",
    });
    proc.kill("SIGINT");
    expect(await proc.exited).toBe(0);

    const ended = insert(app, { status: "completed" });
    const late = await ag(["tail", ended.id, "--port", port]);
    expect(late.exitCode).toBe(0);
    expect(late.stderr).toContain("has ended (completed)");

    const missing = await ag(["tail", crypto.randomUUID(), "--port", port]);
    expect(missing.exitCode).toBe(1);
    expect(missing.stderr).toContain("[SESSION_NOT_FOUND]");
  });
});

describe("ag run against a running server", () => {
  test("--no-stream creates the session and prints where to watch it", async () => {
    const { ag: app, port } = serve({ supervise: true });
    simulateAgents(app);
    const work = tempDir();
    const run = await ag(["run", "go", "--no-stream", "--cwd", work, "--port", port]);
    expect(run.exitCode).toBe(0);
    expect(run.stderr).not.toContain("started one in the background");
    expect(run.stdout).toMatch(/prompt\s+delivered/);
    expect(run.stdout).toContain(`http://127.0.0.1:${port}/dashboard/`);
    expect(app.repo.list().map((s) => s.workDir)).toEqual([work]);
  });

  test("streams the assistant's text until the turn ends", async () => {
    const { ag: app, port, publish } = serve({ supervise: true });
    simulateAgents(app);
    const proc = spawnAg(["run", "say hello", "--cwd", tempDir(), "--port", port]);
    const out = collect(proc.stdout);
    const err = collect(proc.stderr);
    // Once creation has answered, the agent's turn as its transcript and hooks would report it.
    await err.until("session ");
    const record = app.repo.list()[0]!;
    const session = { id: record.id, name: record.name, workDir: record.workDir };
    publish("message.assistant", { session, detail: "Hello from the simulation!" });
    publish("session.idle", { session, detail: "working → idle" });
    publish("session.turn_ended", { session, detail: "working → idle", meta: { reason: "completed" } });
    expect(await proc.exited).toBe(0);
    await Promise.all([out.done, err.done]);
    expect(out.text()).toBe("Hello from the simulation!\n");
    // The session's own page: a link that opens its pending card, terminal and transcript.
    expect(err.text()).toContain(`dashboard: http://127.0.0.1:${port}/dashboard/#/sessions/${record.id}\n`);
  });
});

function range(from: number, to: number): number[] {
  return Array.from({ length: to - from + 1 }, (_, i) => from + i);
}
