import { describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { LaunchRequest } from "../../src/agents/agent.ts";
import { prepareCodexLaunch } from "../../src/agents/codex/launch.ts";
import { isThreadOpen } from "../../src/agents/codex/threads.ts";
import { createOpenCodeAdapter } from "../../src/agents/opencode/adapter.ts";
import { tempDir } from "../helpers/temp.ts";

/**
 * What an agent's launch learns from other processes: a Codex holding a thread's lock, an
 * OpenCode server making a fork's copy. The rest of the launches is tested without any process
 * in tests/unit/codex-launch.test.ts and opencode-launch.test.ts.
 */
const adapterEnv = { home: "", dataDir: null, trustWorkdir: true, selfCommand: [], isRoot: false };

function request(overrides: Partial<LaunchRequest> = {}): LaunchRequest {
  const root = tempDir();
  return {
    sessionId: "s-1",
    workDir: join(root, "work"),
    permissionMode: "default",
    agentCommand: null,
    sessionDir: join(root, "state", "sessions", "s-1"),
    hookUrl: "http://127.0.0.1:9100/v1/hooks/agent",
    hookSecret: "secret-abc",
    env: { EXTRA: "1" },
    ...overrides,
  };
}
const env = (home: string) => ({ ...adapterEnv, home });
const readJson = (path: string) => JSON.parse(readFileSync(path, "utf8"));

describe("launching Codex CLI", () => {
  test("a resume of a thread another Codex is writing is refused (one writer per thread); a fork is not", async () => {
    if (!existsSync("/proc/locks") || !Bun.which("flock")) return; // Linux with util-linux only
    const home = join(tempDir(), ".codex");
    const thread = "01a20ea9-4c77-7da3-b65f-010e1a946965";
    const transcriptPath = join(home, "sessions/2026/11/24", `rollout-2026-11-24T17-45-05-${thread}.jsonl`);
    mkdirSync(join(home, "thread-writer-locks"), { recursive: true });
    const lock = join(home, "thread-writer-locks", `${thread}.lock`);
    writeFileSync(lock, "");
    const resume = (fork: boolean) =>
      prepareCodexLaunch(request({ resume: { conversationId: "s1", fork, transcriptPath } }), env(tempDir()));
    expect((await resume(false)).command.slice(-2)).toEqual(["resume", thread]);
    // The other Codex: an exclusive flock on the thread's lock file, as Codex holds it.
    // (`cat` holds it until its stdin closes: no process outlives the test.)
    const holder = Bun.spawn(["flock", "-x", lock, "cat"], { stdin: "pipe", stdout: "ignore" });
    try {
      const deadline = Date.now() + 5000;
      while (!(await isThreadOpen(transcriptPath, thread)) && Date.now() < deadline) await Bun.sleep(20);
      await expect(resume(false)).rejects.toMatchObject({ code: "CONFLICT" });
      expect((await resume(true)).command.slice(-2)).toEqual(["fork", thread]);
    } finally {
      holder.stdin.end();
      await holder.exited;
    }
    expect(await isThreadOpen(transcriptPath, thread)).toBe(false);
    expect(await isThreadOpen("/elsewhere/rollout.jsonl", thread)).toBeNull();
  });
});

describe("launching OpenCode", () => {
  const adapter = createOpenCodeAdapter(adapterEnv);

  test("a fork starts the UI in a copy made beforehand by a headless OpenCode, gone by then", async () => {
    const parent = request();
    await adapter.prepareLaunch(parent);
    const file = join(parent.sessionDir, "conversation.jsonl");
    writeFileSync(file, JSON.stringify({ type: "session", session: "ses_parent", parent: null, id: "s" }));
    // A stand-in for `opencode serve`: prints where it listens, forks, records what it was asked.
    const dir = tempDir("ag-oc-serve-");
    const program = join(dir, "opencode");
    writeFileSync(
      program,
      `#!${process.execPath}
const server = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch(r) {
  require("node:fs").writeFileSync(${JSON.stringify(join(dir, "asked"))}, JSON.stringify({
    argv: process.argv.slice(2), url: r.url, method: r.method, auth: r.headers.get("authorization"),
    password: process.env.OPENCODE_SERVER_PASSWORD, extra: process.env.EXTRA }));
  return Response.json({ id: "ses_copy" });
} });
console.log("opencode server listening on http://127.0.0.1:" + server.port);
`,
      { mode: 0o755 },
    );
    const fork = request({
      sessionId: "s-2",
      workDir: dir,
      agentCommand: program,
      resume: { conversationId: "s-1", fork: true, transcriptPath: file },
    });
    expect((await adapter.prepareLaunch(fork)).command).toEqual([program, "-s", "ses_copy"]);
    const asked = readJson(join(dir, "asked"));
    expect(asked).toMatchObject({
      argv: ["serve", "--port", "0", "--hostname", "127.0.0.1", "--pure"],
      method: "POST",
      url: expect.stringContaining(`/session/ses_parent/fork?directory=${encodeURIComponent(dir)}`),
      extra: "1",
    });
    expect(asked.auth).toBe(`Basic ${Buffer.from(`opencode:${asked.password}`).toString("base64")}`);
    // The fork's conversation file begins with the parent's, as history, and names the copy last.
    const copied = readFileSync(join(fork.sessionDir, "conversation.jsonl"), "utf8")
      .split("\n")
      .filter(Boolean);
    expect(copied.map((l) => JSON.parse(l))).toEqual([
      { type: "session", session: "ses_parent", parent: null, id: "s", copied: true },
      expect.objectContaining({ type: "session", session: "ses_copy", parent: null }),
    ]);
    // Without the parent's file there is nothing to fork.
    const orphan = request({ sessionId: "s-3", resume: { conversationId: "gone", fork: true } });
    await expect(adapter.prepareLaunch(orphan)).rejects.toThrow("no OpenCode conversation");
  });
});
