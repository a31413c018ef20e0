import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { testTools, versionDir } from "../../scripts/agent-tools.ts";
import { connectEditor, type Editor, initialize } from "../helpers/acp-editor.ts";
import { type AgentWorld, startAgentWorld } from "../helpers/agent-world.ts";
import { compiledBinary, runCommand } from "../helpers/binary.ts";
import { privateSocket, tmux } from "../helpers/tmux.ts";
import { until } from "../helpers/until.ts";

// biome-ignore lint/suspicious/noExplicitAny: protocol lines are inspected field by field
type Json = Record<string, any>;

/**
 * `ag acp` of the compiled binary as an editor launches it, driven by the `acpx` command line
 * (npm, pinned in package.json's testTools, installed into .tools/ by the preflight), against a
 * compiled `ag` whose sessions run the REAL Claude Code in tmux against the mock model. The tests
 * build on each other in one world.
 */
const ACPX_VERSION = testTools().acpx!;
const ACPX = join(versionDir("acpx", ACPX_VERSION), "node_modules", "acpx", "dist", "cli.js");

let world: AgentWorld;
let agAcp: string;

beforeAll(async () => {
  if (!existsSync(ACPX))
    throw new Error(
      `acpx ${ACPX_VERSION} is not installed: bun scripts/agent-tools.ts (or npm test's preflight)`,
    );
  world = await startAgentWorld();
  agAcp = `${await compiledBinary()} acp`;
}, 120_000);
afterAll(() => world?.stop());

/** acpx (run by Bun: it asks for Node 22) with ag acp as its agent, in the world's workDir. */
const acpxArgv = (args: string[]) => [
  process.execPath,
  ACPX,
  "--agent",
  agAcp,
  "--cwd",
  world.workDir,
  ...args,
];

const acpx = (...args: string[]) => runCommand(acpxArgv(args), { env: world.env, cwd: world.workDir });

/** `--format json`'s NDJSON: the protocol's messages as acpx saw them. */
const messages = (stdout: string): Json[] =>
  stdout
    .split("\n")
    .filter((line) => line.startsWith("{"))
    .map((line) => JSON.parse(line));
const updates = (lines: Json[]) =>
  lines.filter((m) => m.method === "session/update").map((m) => m.params.update as Json);
const said = (lines: Json[]) =>
  updates(lines)
    .filter((u) => u.sessionUpdate === "agent_message_chunk")
    .map((u) => u.content.text)
    .join("");
const stopReason = (lines: Json[]) => lines.find((m) => m.result?.stopReason)?.result.stopReason;

async function sessionsOfWorkDir(status?: string): Promise<Json[]> {
  const query = status ? `?status=${status}` : "";
  const listed = await world.api<Json[]>("GET", `/v1/sessions${query}`);
  return listed.body.filter((s) => s.workDir === world.workDir);
}

describe("ag acp with acpx and the real Claude Code", () => {
  test("a new session: the prompt's reply streams back, with ag's usage", async () => {
    const run = await acpx("--format", "json", "exec", "say hello");
    expect(run.exitCode).toBe(0);
    const lines = messages(run.stdout);
    expect(said(lines)).toContain("Hello from the mock model!");
    expect(stopReason(lines)).toBe("end_turn");
    const usage = updates(lines).find((u) => u.sessionUpdate === "usage_update");
    expect(usage?.used).toBeGreaterThan(0);
    expect(usage?.cost.currency).toBe("USD");
  }, 120_000);

  test("a file write asks the client, approved there: the file is written", async () => {
    const run = await acpx("--format", "json", "--approve-all", "exec", "edit file");
    expect(run.exitCode).toBe(0);
    const lines = messages(run.stdout);
    const asked = lines.find((m) => m.method === "session/request_permission");
    expect(asked?.params.options.map((o: Json) => o.kind)).toEqual(["allow_once", "reject_once"]);
    expect(lines.find((m) => m.id === asked?.id && m.result?.outcome)?.result.outcome.outcome).toBe(
      "selected",
    );
    expect(readFileSync(join(world.workDir, "hello.txt"), "utf8")).toBe("hello from the mock\n");
    const write = updates(lines).filter((u) => u.title?.startsWith("Write"));
    expect(write.map((u) => u.sessionUpdate)).toContain("tool_call");
    expect(
      updates(lines).some((u) => u.toolCallId === write[0]?.toolCallId && u.status === "completed"),
    ).toBe(true);
    expect(stopReason(lines)).toBe("end_turn");
  }, 120_000);

  test("approved through the REST API while acpx asks at its terminal: acpx sees the request withdrawn", async () => {
    const socket = privateSocket();
    const command = acpxArgv(["exec", "change file"])
      .map((arg) => `'${arg}'`)
      .join(" ");
    const env = Object.entries(world.env).flatMap(([k, v]) => ["-e", `${k}=${v}`]);
    tmux(
      socket,
      "new-session",
      "-d",
      "-x",
      "200",
      "-y",
      "60",
      ...env,
      "-c",
      world.workDir,
      `${command}; echo "acpx exited $?"; sleep 600`,
    );
    const pane = () => tmux(socket, "capture-pane", "-p", "-J", "-S", "-200", "-t", "0").stdout;
    // Each prompt of the turn (Claude Code may ask for the Read too) is answered from the API.
    while (!pane().includes("acpx exited")) {
      await until(
        async () =>
          (await sessionsOfWorkDir("permission_prompt")).length > 0 || pane().includes("acpx exited"),
        90_000,
      );
      await until(() => pane().includes("[permission] Allow") || pane().includes("acpx exited"), 30_000);
      const [waiting] = await sessionsOfWorkDir("permission_prompt");
      if (!waiting) continue;
      const approved = await world.api("POST", `/v1/sessions/${waiting.id}/approve`, {
        permissionId: waiting.pendingPermission.id,
      });
      expect(approved.status).toBe(200);
      await until(async () => (await sessionsOfWorkDir("permission_prompt")).length === 0, 30_000);
    }
    const shown = pane();
    expect(shown).toContain("$/cancel_request");
    expect(shown).toContain("[done] end_turn");
    // acpx counts a withdrawn request as not approved by it: its exit status says so (docs/acp.md).
    expect(shown).toMatch(/acpx exited (0|5)/);
    expect(readFileSync(join(world.workDir, "hello.txt"), "utf8")).toBe("goodbye from the mock\n");
  }, 180_000);

  test("cancel mid-stream: the prompt ends cancelled, the session lives on and answers the next", async () => {
    const created = await acpx("sessions", "new", "--name", "cancel");
    expect(created.exitCode).toBe(0);
    const slow = Bun.spawn(acpxArgv(["--format", "json", "prompt", "-s", "cancel", "slow 30"]), {
      env: world.env,
      cwd: world.workDir,
      stdout: "pipe",
      stderr: "pipe",
    });
    const output = new Response(slow.stdout).text();
    await until(
      () =>
        world.mock
          .requests()
          .some((r) => r.kind === "main" && r.prompt === "slow 30" && r.status === undefined),
      90_000,
    );
    const [working] = await sessionsOfWorkDir("working");
    expect(working).toBeDefined();
    expect((await acpx("cancel", "-s", "cancel")).exitCode).toBe(0);
    await slow.exited;
    expect(stopReason(messages(await output))).toBe("cancelled");
    await world.waitFor(working!.id, "idle", 30_000);
    expect(world.mock.requests().findLast((r) => r.prompt === "slow 30")?.status).toBe("aborted");

    const next = await acpx("--format", "json", "prompt", "-s", "cancel", "say hello");
    expect(stopReason(messages(next.stdout))).toBe("end_turn");
    expect(said(messages(next.stdout))).toContain("Hello from the mock model!");
    expect((await world.api<Json>("GET", `/v1/sessions/${working!.id}`)).body.status).toBe("idle");
    await acpx("sessions", "close", "cancel");
  }, 180_000);

  describe("a session started by ag run", () => {
    let id: string;
    let editor: Editor;

    beforeAll(async () => {
      const binary = await compiledBinary();
      const run = Bun.spawn([binary, "run", "--new", "say hello"], {
        env: world.env,
        cwd: world.workDir,
        stdout: "pipe",
        stderr: "pipe",
      });
      const [stderr, exitCode] = await Promise.all([new Response(run.stderr).text(), run.exited]);
      expect(exitCode).toBe(0);
      id = /session \S+ \(([0-9a-f-]{36})\)/.exec(stderr)![1]!;
      editor = connectEditor({ command: [binary, "acp"], env: world.env, cwd: world.workDir });
      await initialize(editor);
    }, 120_000);
    afterAll(() => editor?.stop());

    test("acpx lists it (session/list)", async () => {
      const listed = await acpx("sessions", "list", "--filter-cwd", world.workDir);
      expect(listed.exitCode).toBe(0);
      expect(listed.stdout).toContain(id);
    }, 60_000);

    test("session/load replays its history, then follows a turn sent from elsewhere live", async () => {
      await editor.request("session/load", { sessionId: id, cwd: world.workDir, mcpServers: [] });
      const replayed = editor.updates.filter((n) => n.sessionId === id).map((n) => n.update as Json);
      expect(replayed[0]).toMatchObject({
        sessionUpdate: "user_message_chunk",
        content: { text: "say hello" },
      });
      expect(editor.said(id)).toContain("Hello from the mock model!");

      const from = editor.updates.length;
      const sent = await world.api<Json>("POST", `/v1/sessions/${id}/send`, { text: "tell me more" });
      expect(sent.body.delivered).toBe(true);
      await until(() => editor.said(id, from).includes("Mock reply to: tell me more"), 90_000);
      const live = editor.updates.slice(from).map((n) => n.update.sessionUpdate);
      expect(live).toContain("user_message_chunk");
    }, 120_000);
  });
});
