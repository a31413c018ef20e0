import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { freePort } from "../helpers/binary.ts";
import { pagedIds } from "../helpers/cursor.ts";
import { processesNaming } from "../helpers/processes.ts";
import { callApi, startTestRuntime } from "../helpers/runtime.ts";
import { tempDir } from "../helpers/temp.ts";
import { until } from "../helpers/until.ts";

// biome-ignore lint/suspicious/noExplicitAny: response bodies are inspected field by field
type Json = Record<string, any>;

/**
 * Headless sessions (driver acp) through ag's real runtime (SQLite file, HTTP on port 0), with the
 * fake ACP agent (tests/fakes/acp-agent.ts) as the agent: the Gemini adapter's ACP entry runs the
 * session's `agentCommand` in place of `gemini` (then `--acp --approval-mode <mode>`, which the
 * fake ignores). No real agent CLI, no model.
 */
const FAKE = join(import.meta.dir, "..", "fakes", "acp-agent.ts");
const home = tempDir("ag-acp-home-");
const workDir = tempDir("ag-acp-work-");
const fakeState = tempDir("ag-acp-fake-");
const fakeCommand = (...flags: string[]) =>
  [process.execPath, FAKE, "--state", fakeState, ...flags].join(" ");

type Runtime = Awaited<ReturnType<typeof startTestRuntime>>;
let ag: Runtime;
const start = async () => {
  ag = await startTestRuntime({}, { home });
};
const stop = async () => {
  await ag.drain(100);
  ag.close();
};

const api = (method: string, path: string, body?: unknown) => callApi<Json>(ag, method, path, body);

async function reach(id: string, status: string, ms = 15_000): Promise<Json> {
  const deadline = Date.now() + ms;
  let last: Json = {};
  while (Date.now() < deadline) {
    last = (await api("GET", `/v1/sessions/${id}`)).body;
    if (last.status === status) return last;
    await Bun.sleep(25);
  }
  throw new Error(`session ${id} did not reach ${status} (last: ${last.status})`);
}

async function create(prompt?: string, flags: string[] = [], body: Json = {}): Promise<Json> {
  const created = await api("POST", "/v1/sessions", {
    agent: "gemini",
    driver: "acp",
    workDir,
    agentCommand: fakeCommand(...flags),
    reuse: false,
    ...(prompt ? { prompt } : {}),
    ...body,
  });
  expect(created.status).toBe(201);
  return created.body;
}

const send = async (id: string, text: string) =>
  (await api("POST", `/v1/sessions/${id}/send`, { text })).body;
const messages = async (id: string, query = "limit=200") =>
  (await api("GET", `/v1/sessions/${id}/transcript/cursor?${query}`)).body.messages as Json[];

beforeAll(start, 30_000);
afterAll(async () => {
  await stop();
});

describe("an ACP session on the fake agent", () => {
  let id: string;

  test("the prompt is delivered once; working, then idle with the reply and the turn's tokens", async () => {
    const created = await create("say hello");
    expect(created).toMatchObject({ driver: "acp", promptDelivery: { delivered: true, attempts: 1 } });
    id = created.id;
    const idle = await reach(id, "idle");
    const read = await api("GET", `/v1/sessions/${id}/read`);
    expect(read.body.output).toBe("Hello from the fake agent!");
    // The fake reports input = the prompt's length, output = the reply's, in _meta.quota.
    expect(idle.tokenUsage).toMatchObject({ input: "say hello".length, output: "the fake agent!".length });
    const transcript = await messages(id);
    expect(transcript.filter((m) => m.role === "user" && m.kind === "prompt").map((m) => m.text)).toEqual([
      "say hello",
    ]);
    expect(transcript.map((m) => m.kind)).toEqual(["prompt", "thinking", "text", "system"]);
  }, 30_000);

  test("a write approved: pendingPermission carries the agent's own options, the file is written", async () => {
    expect(await send(id, "write file approved.txt")).toEqual({ delivered: true, attempts: 1 });
    const waiting = await reach(id, "permission_prompt");
    expect(waiting.pendingPermission).toMatchObject({
      kind: "tool",
      tool: "edit",
      detail: "Write approved.txt",
    });
    expect(waiting.pendingPermission.options).toEqual([
      { index: 1, label: "Allow", description: "allow_once", optionId: "fake-allow" },
      { index: 2, label: "Always allow", description: "allow_always", optionId: "fake-always" },
      { index: 3, label: "Reject", description: "reject_once", optionId: "fake-reject" },
    ]);
    expect(waiting.pendingPermission.toolInput).toMatchObject({
      toolCallId: expect.any(String),
      kind: "edit",
    });
    const approved = await api("POST", `/v1/sessions/${id}/approve`, {
      permissionId: waiting.pendingPermission.id,
    });
    expect(approved.status).toBe(200);
    await reach(id, "idle");
    expect(readFileSync(join(workDir, "approved.txt"), "utf8")).toBe("written by the fake agent\n");
    const results = (await messages(id)).filter((m) => m.kind === "tool_result");
    expect(results.at(-1)).toMatchObject({ isError: false, text: "wrote approved.txt (fake-allow)" });
  }, 30_000);

  test("a write rejected: the file is not written, the session is idle again", async () => {
    await send(id, "write file rejected.txt");
    await reach(id, "permission_prompt");
    expect((await api("POST", `/v1/sessions/${id}/reject`)).status).toBe(200);
    await reach(id, "idle");
    expect(existsSync(join(workDir, "rejected.txt"))).toBe(false);
    expect((await api("GET", `/v1/sessions/${id}/read`)).body.output).toBe("I did not write rejected.txt.");
  }, 30_000);

  test("/answer by option number: the RPC response carries that option's optionId", async () => {
    await send(id, "write file answered.txt");
    const waiting = await reach(id, "permission_prompt");
    const always = waiting.pendingPermission.options.find((o: Json) => o.description === "allow_always");
    expect((await api("POST", `/v1/sessions/${id}/answer`, { option: always.index })).status).toBe(200);
    await reach(id, "idle");
    expect(existsSync(join(workDir, "answered.txt"))).toBe(true);
    const results = (await messages(id)).filter((m) => m.kind === "tool_result");
    expect(results.at(-1)?.text).toBe("wrote answered.txt (fake-always)");
  }, 30_000);

  test("the readonly profile: a write is refused at once with the agent's reject option, no prompt shown", async () => {
    const profile = await api("PUT", `/v1/sessions/${id}/permission-profile`, { profile: "readonly" });
    expect(profile.status).toBe(200);
    const seen: string[] = [];
    const unsubscribe = ag.bus.subscribe((event) => {
      if (event.session?.id === id) seen.push(event.event);
    });
    await send(id, "write file refused.txt");
    await reach(id, "idle");
    // The state reads idle at once; its events may follow, within 1 s (docs/events.md: a turn's
    // status events wait for its messages to be out).
    await until(() => seen.includes("session.turn_ended"), 5_000);
    unsubscribe();
    expect(existsSync(join(workDir, "refused.txt"))).toBe(false);
    expect((await api("GET", `/v1/sessions/${id}/read`)).body.output).toBe("I did not write refused.txt.");
    expect(seen).toContain("session.idle");
    expect(seen.indexOf("session.idle")).toBeLessThan(seen.indexOf("session.turn_ended"));
    expect(seen).not.toContain("permission.requested");
    const back = await api("PUT", `/v1/sessions/${id}/permission-profile`, { profile: "standard" });
    expect(back.status).toBe(200);
  }, 30_000);

  test("/send while a turn runs is 409 SESSION_BUSY; interrupt sends session/cancel: idle, the turn interrupted", async () => {
    await send(id, "slow");
    await reach(id, "working");
    const busy = await api("POST", `/v1/sessions/${id}/send`, { text: "say hello" });
    expect(busy.status).toBe(409);
    expect(busy.body.code).toBe("SESSION_BUSY");
    await Bun.sleep(200);
    expect((await api("POST", `/v1/sessions/${id}/interrupt`)).status).toBe(200);
    await reach(id, "idle");
    const ends = (await messages(id)).filter((m) => m.subtype === "turn_end");
    expect(ends.at(-1)?.text).toBe("cancelled");
    // The streamed chunks were written down as one reply.
    const replies = (await messages(id)).filter((m) => m.kind === "text");
    expect(replies.at(-1)?.text).toStartWith("chunk 0 chunk 1 ");
  }, 30_000);

  test("the transcript pages by cursor without gaps or overlaps, and its ids stay the same", async () => {
    const all = await messages(id);
    expect(all.length).toBeGreaterThan(12);
    const seen = await pagedIds(async (path) => (await api("GET", path)).body, id);
    expect(seen).toEqual(all.map((m) => m.id));
    await send(id, "anything");
    await reach(id, "idle");
    const grown = await messages(id);
    expect(grown.slice(0, all.length)).toEqual(all);
    expect(grown.length).toBeGreaterThan(all.length);
    const tokens = (await api("GET", `/v1/sessions/${id}`)).body.tokenUsage;
    expect(tokens.input).toBeGreaterThan("say hello".length);
  }, 30_000);

  test("the agent dies: crashed, its stderr tail in the diagnostics", async () => {
    const created = await create();
    await reach(created.id, "idle");
    await send(created.id, "die");
    const crashed = await reach(created.id, "crashed");
    expect(crashed.driver).toBe("acp");
    const diagnostics = (await api("GET", "/v1/diagnostics?limit=200")).body as Json;
    const exits = JSON.stringify(diagnostics);
    expect(exits).toContain(`session ${created.id}: the agent exited (status 3)`);
    expect(exits).toContain("fake agent: dying as asked");
  }, 30_000);
});

describe("ag restarts while ACP sessions are idle", () => {
  test("with loadSession: reopened by session/load (idle, transcript intact, a new prompt works); without it, or when the load fails: crashed (driver_restart)", async () => {
    const loads = await create("say hello");
    await reach(loads.id, "idle");
    await send(loads.id, "write file before-restart.txt");
    await reach(loads.id, "permission_prompt");
    await api("POST", `/v1/sessions/${loads.id}/approve`);
    await reach(loads.id, "idle");
    const cannot = await create("say hello", ["--no-load"]);
    await reach(cannot.id, "idle");
    const fails = await create("say hello", ["--load-fails"]);
    await reach(fails.id, "idle");
    const late = await create("say hello", ["--replay-late"]);
    await reach(late.id, "idle");
    const beforeLate = await messages(late.id);
    const before = await messages(loads.id);
    const beforeCannot = await messages(cannot.id);
    const tokensBefore = (await api("GET", `/v1/sessions/${loads.id}`)).body.tokenUsage;

    await stop();
    await start();

    const reopened = await reach(loads.id, "idle");
    expect(reopened.driver).toBe("acp");
    const after = await messages(loads.id);
    // What the agent replayed is not written again: the same entries, then ag's note.
    expect(after.slice(0, before.length)).toEqual(before);
    expect(after.slice(before.length)).toMatchObject([{ role: "system", subtype: "reopened" }]);
    expect(reopened.tokenUsage).toEqual(tokensBefore);

    // The agent kept its context (session/load, not a new session): it remembers the earlier prompts.
    expect(await send(loads.id, "recall")).toEqual({ delivered: true, attempts: 1 });
    await reach(loads.id, "idle");
    expect((await api("GET", `/v1/sessions/${loads.id}/read`)).body.output).toBe(
      "I remember: say hello | write file before-restart.txt",
    );

    // The agent without loadSession: crashed (driver_restart), ag's transcript kept.
    const crashed = await reach(cannot.id, "crashed");
    expect(crashed).toMatchObject({ endReason: "driver_restart", endedAt: expect.any(String) });
    expect(await messages(cannot.id)).toEqual(beforeCannot);

    // The agent advertises loadSession but session/load fails: crashed (driver_restart) as well.
    expect(await reach(fails.id, "crashed")).toMatchObject({ endReason: "driver_restart" });

    // History replayed after the load's answer is not written again either (not glued onto the
    // next reply): the kept entries, ag's note, then only the new turn.
    await reach(late.id, "idle");
    await Bun.sleep(300);
    const lateAfter = await messages(late.id);
    expect(lateAfter.slice(0, beforeLate.length)).toEqual(beforeLate);
    expect(lateAfter.slice(beforeLate.length)).toMatchObject([{ role: "system", subtype: "reopened" }]);
    expect(await send(late.id, "say hello")).toEqual({ delivered: true, attempts: 1 });
    await reach(late.id, "idle");
    expect((await api("GET", `/v1/sessions/${late.id}/read`)).body.output).toBe("Hello from the fake agent!");
  }, 60_000);
});

describe("ag answers while an ACP agent is still reopening", () => {
  test("the conversation reads whole from ag's first answer; a prompt sent meanwhile is the agent's once it is back", async () => {
    const gate = join(fakeState, `gate-${Date.now()}`);
    const session = await create("say hello", ["--load-gate", gate]);
    await reach(session.id, "idle");
    const before = await messages(session.id);
    expect(before.length).toBeGreaterThan(2);

    await stop();
    // ag answers before its start is over: the agent's session/load waits at the gate meanwhile.
    const port = freePort();
    const starting = startTestRuntime({ SVC_PORT: String(port) }, { home });
    const url = `http://127.0.0.1:${port}`;
    let sent: Promise<Json> | null = null;
    try {
      // The same state directory: the token ag generated at its first start is the one it reuses.
      ag = { url, token: ag.token } as Runtime;
      while (!(await fetch(`${url}/v1/health`).catch(() => null))?.ok) await Bun.sleep(5);
      // What it reads now (its stored status) is what it read before the restart.
      expect((await api("GET", `/v1/sessions/${session.id}`)).body.status).toBe("idle");
      expect(await messages(session.id)).toEqual(before);
      sent = send(session.id, "recall");
      // Not refused at once for want of a running agent: it waits for the agent.
      const early = await Promise.race([sent, Bun.sleep(200).then(() => "waiting")]);
      expect(early).toBe("waiting");
    } finally {
      writeFileSync(gate, "");
      ag = await starting;
    }
    expect(await sent).toEqual({ delivered: true, attempts: 1 });
    await reach(session.id, "idle");
    const after = await messages(session.id);
    expect(after.slice(0, before.length)).toEqual(before);
    expect(after.slice(before.length)).toMatchObject([
      { role: "system", subtype: "reopened" },
      { role: "user", text: "recall" },
      { role: "assistant", text: "I remember: say hello" },
      { role: "system", subtype: "turn_end" },
    ]);
  }, 60_000);
});

describe("ag restarts in the middle of a turn", () => {
  test("reopened by session/load: idle, the lost turn ended as interrupted, a new prompt works", async () => {
    const session = await create("slow");
    await reach(session.id, "working");
    await Bun.sleep(200);
    const before = await messages(session.id);

    await stop();
    await start();

    await reach(session.id, "idle");
    const after = await messages(session.id);
    expect(after.slice(0, before.length)).toEqual(before);
    // What ag wrote as it stopped (the streamed chunks so far), then its note and the lost turn's end.
    expect(after.slice(-2)).toMatchObject([
      { role: "system", subtype: "reopened" },
      { role: "system", subtype: "turn_end", text: "cancelled" },
    ]);
    await send(session.id, "recall");
    await reach(session.id, "idle");
    expect((await api("GET", `/v1/sessions/${session.id}/read`)).body.output).toBe("I remember: slow");
  }, 60_000);
});

describe("what the driver reads of the protocol itself (the fake as OpenCode's entry, `acp` appended)", () => {
  const opencode = (permissionMode: string) => ({ agent: "opencode", permissionMode });

  test("tokens from ACP's own `usage` of the prompt response, under the model its config option names", async () => {
    const created = await create("say hello", ["--acp-usage"], opencode("default"));
    const idle = await reach(created.id, "idle");
    expect(idle.tokenUsage).toEqual({
      input: "say hello".length,
      output: "the fake agent!".length + 2,
      cacheRead: 7,
      cacheCreation: 0,
    });
    const metrics = (await api("GET", `/v1/sessions/${created.id}/metrics`)).body;
    expect(metrics.estimatedCost.unpriced).toEqual(["fake/acp-model"]);
    // Without --acp-usage and without a reading of its own (OpenCode's entry has none): no tokens.
    const quota = await create("say hello", [], opencode("default"));
    expect((await reach(quota.id, "idle")).tokenUsage).toMatchObject({ input: 0, output: 0 });
  }, 30_000);

  test("an entry that leaves permissions to its client (bypassPermissions): ag approves, no prompt waits", async () => {
    const created = await create("write file bypassed.txt", [], opencode("bypassPermissions"));
    await reach(created.id, "idle");
    expect(readFileSync(join(workDir, "bypassed.txt"), "utf8")).toBe("written by the fake agent\n");
    const results = (await messages(created.id)).filter((m) => m.kind === "tool_result");
    expect(results).toMatchObject([{ isError: false, text: "wrote bypassed.txt (fake-allow)" }]);
    // The same entry in its default mode asks.
    const asking = await create("write file asked.txt", [], opencode("default"));
    expect((await reach(asking.id, "permission_prompt")).pendingPermission.detail).toBe("Write asked.txt");
    await api("POST", `/v1/sessions/${asking.id}/reject`);
    await reach(asking.id, "idle");
    expect(existsSync(join(workDir, "asked.txt"))).toBe(false);
  }, 30_000);
});

describe("what a client sees of a headless session is as true as of a terminal one", () => {
  test("/health: alive, with the agent's pid; GET /v1/metrics: its tokens, cost and process; keys: refused naming the driver", async () => {
    const created = await create("say hello");
    const idle = await reach(created.id, "idle");
    const health = (await api("GET", `/v1/sessions/${created.id}/health`)).body;
    expect([health.alive, health.pane, typeof health.agentPid]).toEqual([true, null, "number"]);
    expect(readFileSync(`/proc/${health.agentPid}/cmdline`, "utf8")).toContain("acp-agent.ts");

    const metrics = (await api("GET", "/v1/metrics")).body;
    const mine = metrics.bySession.find((s: Json) => s.id === created.id);
    expect(mine?.tokens).toEqual(idle.tokenUsage);
    // The fake's model has no price: priced by budgets.defaultPrice (never silently free) and
    // named as unpriced (docs/budgets.md, "What is counted").
    expect(mine?.estimatedCost).toEqual({ usd: expect.any(Number), unpriced: ["fake-model"] });
    expect(mine.estimatedCost.usd).toBeGreaterThan(0);
    expect(metrics.tokensByModel["fake-model"].input).toBeGreaterThanOrEqual(idle.tokenUsage.input);
    const process = metrics.agents.bySession.find((s: Json) => s.id === created.id);
    expect(process).toMatchObject({ pid: health.agentPid, agent: "gemini" });
    expect(process.rssBytes).toBeGreaterThan(0);
    expect((await api("GET", `/v1/sessions/${created.id}/metrics`)).body.agentProcess?.pid).toBe(
      health.agentPid,
    );

    const keys = await api("POST", `/v1/sessions/${created.id}/escape`);
    expect(keys.body.code).toBe("NOT_A_TERMINAL_SESSION");
    expect(keys.body.error).toContain(`session ${created.id} runs headless (driver acp)`);
    expect(keys.body.error).toContain("ag read");

    await api("DELETE", `/v1/sessions/${created.id}`);
    expect((await api("GET", `/v1/sessions/${created.id}/health`)).body).toMatchObject({
      alive: false,
      agentPid: null,
    });
  }, 30_000);

  test("an agent that cannot start: its whole stderr in the session's end reason, not the last 300 characters", async () => {
    const failed = await api("POST", "/v1/sessions", {
      agent: "gemini",
      driver: "acp",
      workDir,
      agentCommand: fakeCommand("--stderr-lines", "200", "--exit-at-start"),
      reuse: false,
      prompt: "say hello",
    });
    expect(failed.status).toBe(503);
    // The refusal's message is clipped as every error envelope's; the session keeps the whole cause.
    expect(failed.body.error).toContain(
      "the agent exited during initialize (status 2): fake agent: stderr line 1\n",
    );
    const [ended] = (await api("GET", "/v1/sessions?status=crashed")).body as Json[];
    for (const line of ["stderr line 1\n", "stderr line 100\n", "stderr line 200"])
      expect(ended?.endReason).toContain(`fake agent: ${line}`);
  }, 30_000);
});

describe("restarts keep each reply once and the whole cause of a failed reopen", () => {
  test("history the agent replays after session/load, still streaming when the next prompt is sent, is not written", async () => {
    const session = await create("say hello", ["--replay-slow"]);
    await reach(session.id, "idle");
    for (const text of ["one", "two", "three"]) {
      await send(session.id, text);
      await reach(session.id, "idle");
    }
    const before = await messages(session.id);
    for (const _round of [1, 2]) {
      await stop();
      await start();
      // Sent at once, a turn as long as a model call: the replay must not run into it.
      expect(await send(session.id, `pause 1500`)).toEqual({ delivered: true, attempts: 1 });
      await reach(session.id, "idle");
    }
    const after = await messages(session.id);
    expect(after.slice(0, before.length)).toEqual(before);
    expect(after.slice(before.length)).toMatchObject([
      { role: "system", subtype: "reopened" },
      { role: "user", text: "pause 1500" },
      { role: "assistant", text: "paused 1500 ms" },
      { role: "system", subtype: "turn_end" },
      { role: "system", subtype: "reopened" },
      { role: "user", text: "pause 1500" },
      { role: "assistant", text: "paused 1500 ms" },
      { role: "system", subtype: "turn_end" },
    ]);
    expect(after).toHaveLength(before.length + 8);
  }, 60_000);

  test("a reopen that fails keeps the whole cause: the load's error and the agent's stderr, in the log and the diagnostics", async () => {
    const session = await create("say hello", ["--load-fails", "--stderr-lines", "40"]);
    await reach(session.id, "idle");
    await stop();
    await start();
    expect(await reach(session.id, "crashed")).toMatchObject({ endReason: "driver_restart" });
    const diagnostics = JSON.stringify((await api("GET", "/v1/diagnostics?limit=500")).body);
    const reopen = JSON.parse(diagnostics).events.find(
      (e: Json) => e.type === "acp.reopen" && e.detail.includes(session.id),
    );
    expect(reopen?.detail).toContain("session/load failed");
    for (const line of ["stderr line 1\n", "stderr line 40\n", "no previous sessions found"])
      expect(reopen?.detail).toContain(`fake agent: ${line}`);
    // The log's lines are JSON: the cause's line breaks are escaped there.
    const logged = ag.logs.find((l) => l.includes(`ACP session ${session.id}: not reopened`));
    for (const line of ["stderr line 1\\n", "stderr line 40\\n", "no previous sessions found"])
      expect(logged).toContain(`fake agent: ${line}`);
  }, 60_000);
});

describe("an agent an earlier ag left running (ag killed with SIGKILL)", () => {
  test("is ended with its process group before the session is reopened: one agent per session", async () => {
    const session = await create("say hello");
    await reach(session.id, "idle");
    const dir = join(ag.stateDir, "sessions", session.id);
    const state = () => JSON.parse(readFileSync(join(dir, "acp.json"), "utf8")) as Json;
    expect(state().child.pid).toBe((await api("GET", `/v1/sessions/${session.id}/health`)).body.agentPid);
    await stop();
    // What a killed ag leaves: its child still running (stdin held open), recorded with the session.
    const marker = `orphan-${session.id}`;
    const orphan = Bun.spawn([process.execPath, FAKE, "--state", fakeState, marker], {
      stdin: "pipe",
      stdout: "pipe",
      stderr: "ignore",
      detached: true,
    });
    const stat = readFileSync(`/proc/${orphan.pid}/stat`, "utf8");
    const startTicks = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19]);
    writeFileSync(
      join(dir, "acp.json"),
      JSON.stringify({ ...state(), child: { pid: orphan.pid, startTicks } }),
    );
    await start();
    await reach(session.id, "idle");
    await until(() => orphan.exitCode !== null || orphan.signalCode !== null, 5_000);
    expect(processesNaming(marker)).toEqual([]);
    const health = (await api("GET", `/v1/sessions/${session.id}/health`)).body;
    expect(health.alive).toBe(true);
    expect(health.agentPid).not.toBe(orphan.pid);
    expect(state().child.pid).toBe(health.agentPid);
    const diagnostics = JSON.stringify((await api("GET", "/v1/diagnostics?limit=500")).body);
    expect(diagnostics).toContain(
      `session ${session.id}: an agent an earlier ag started (pid ${orphan.pid})`,
    );
  }, 60_000);
});
