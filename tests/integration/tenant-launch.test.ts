import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { chmodSync, mkdirSync, realpathSync, renameSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { call, MASTER, newKey } from "../helpers/access.ts";
import { startTestRuntime } from "../helpers/runtime.ts";
import { tempDir } from "../helpers/temp.ts";
import { privateSocket, tmux } from "../helpers/tmux.ts";
import { until } from "../helpers/until.ts";

/**
 * Tenant folders are judged at every launch, on the path as it resolves then (issue 28): the real
 * runtime, real tmux on a private socket, a small program as the terminal agent and the fake ACP
 * agent as the headless one. A tenant's session is created in its root; then its folder is
 * swapped for a link into another tenant's root, and each later launch is refused.
 */
const base = realpathSync(tempDir("ag-tenant-launch-"));
const acme = join(base, "acme");
const globex = join(base, "globex");
const secret = join(globex, "secret");
for (const dir of [acme, secret, join(acme, "elsewhere")]) mkdirSync(dir, { recursive: true });
const home = tempDir("ag-tenant-home-");
const socket = privateSocket();
const FAKE_ACP = join(import.meta.dir, "..", "fakes", "acp-agent.ts");
const fakeState = tempDir("ag-tenant-fake-");

/** A terminal agent that says it is ready and waits (it ignores the flags ag adds). */
const agent = join(tempDir(), "agent.sh");
writeFileSync(
  agent,
  [
    "#!/bin/sh",
    '[ "$1" = --version ] && { echo "2.1.197 (Claude Code)"; exit 0; }',
    "echo agent ready",
    "exec sleep 600",
  ].join("\n"),
);
chmodSync(agent, 0o755);

const env = {
  SVC_TMUX_SOCKET: socket,
  SVC_AUTH_TOKEN: MASTER,
  SVC_RATE_LIMIT_PER_MIN: "0",
  // A prompt the little agent never confirms is given up on after 5 s.
  SVC_CREATE_WAIT_MS: "15000",
};
const configFile = { tenantWorkdirs: { acme: { root: acme }, globex: { root: globex } } };
let ag: Awaited<ReturnType<typeof startTestRuntime>>;
let key: string;

const api = (method: string, path: string, body?: unknown, token = key) =>
  call(ag.app, method, path, { token, body });

/** A folder of acme's, created now. */
function folder(name: string): string {
  const dir = join(acme, name);
  mkdirSync(dir);
  return dir;
}

/** The folder becomes a link to `target` (the attack, or a harmless move within the root). */
function swapForLink(dir: string, target: string): void {
  renameSync(dir, `${dir}.moved-${Date.now()}`);
  symlinkSync(target, dir);
}

/** The folders ag's panes run in now. */
const paneDirs = () =>
  tmux(socket, "list-panes", "-a", "-F", "#{pane_current_path}").stdout.split("\n").filter(Boolean);

/** A conversation on disk, as the agent would have written it (fork and resume look for it). */
function conversation(id: string): void {
  const dir = join(home, ".claude", "projects", "planted");
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, `${id}.jsonl`), "");
}

async function terminalSession(workDir: string): Promise<string> {
  const created = await api("POST", "/v1/sessions", { workDir, agentCommand: agent, reuse: false });
  expect(created.status).toBe(201);
  const id = created.body.id as string;
  await until(
    async () => (await api("GET", `/v1/sessions/${id}/pane`)).body.content?.includes("agent ready"),
    10_000,
  );
  return id;
}

function expectDenied(response: { status: number; body: Record<string, unknown> }, workDir: string): void {
  expect(response.status).toBe(403);
  expect(response.body.code).toBe("TENANT_WORKDIR_DENIED");
  expect(response.body.error).toBe(
    `refused to start the agent: workDir ${workDir} is outside its root for tenant acme`,
  );
}

/** The audit records of launches refused for acme's folders. */
async function denials(): Promise<string[]> {
  const audit = await api("GET", "/v1/audit?limit=200", undefined, MASTER);
  return (audit.body.records ?? audit.body)
    .filter(
      (r: { action: string; tenantId: string | null }) =>
        r.action === "session.action.denied" && r.tenantId === "acme",
    )
    .map((r: { target: string }) => r.target);
}

beforeAll(async () => {
  ag = await startTestRuntime(env, { home, configFile });
  key = (await newKey(ag.app, { name: "acme", scopes: ["*"], tenantId: "acme" })).key;
}, 30_000);

afterAll(async () => {
  await ag.drain(200);
  ag.close();
});

describe("spawn", () => {
  test("runs where the folder leads now while that is in the root; refused once it leads into another tenant's", async () => {
    const dir = folder("spawned");
    const parent = await terminalSession(dir);
    // Moved within acme's root: allowed, and the teammate runs in the real folder.
    swapForLink(dir, join(acme, "elsewhere"));
    const teammate = await api("POST", `/v1/sessions/${parent}/spawn`, { prompt: "help" });
    expect(teammate.status).toBe(201);
    expect(paneDirs()).toContain(join(acme, "elsewhere"));

    swapForLink(dir, secret);
    const refused = await api("POST", `/v1/sessions/${parent}/spawn`, { prompt: "help" });
    expectDenied(refused, dir);
    expect(await denials()).toContain(`POST /v1/sessions/${parent}/spawn`);
    expect(paneDirs()).not.toContain(secret);
    // The refused teammate is recorded as what it is: crashed, saying why.
    const children = (await api("GET", "/v1/sessions")).body.filter(
      (s: { parentId: string | null }) => s.parentId === parent,
    );
    expect(children.map((s: { status: string }) => s.status).sort()).toEqual(["crashed", "working"]);
    expect(children.find((s: { status: string }) => s.status === "crashed").endReason).toContain(
      "is outside its root for tenant acme",
    );
  }, 40_000);
});

describe("fork and resume", () => {
  test("allowed in the root; refused after the folder is swapped for a link into another tenant's root", async () => {
    const dir = folder("continued");
    const id = await terminalSession(dir);
    conversation(id);
    const fork = await api("POST", `/v1/sessions/${id}/fork`);
    expect(fork.status).toBe(201);
    expect((await api("DELETE", `/v1/sessions/${id}`)).status).toBe(200);
    const resumed = await api("POST", `/v1/sessions/${id}/resume`);
    expect(resumed.status).toBe(200);
    expect((await api("DELETE", `/v1/sessions/${id}`)).status).toBe(200);

    swapForLink(dir, secret);
    expectDenied(await api("POST", `/v1/sessions/${id}/fork`), dir);
    expectDenied(await api("POST", `/v1/sessions/${id}/resume`), dir);
    // A resumed session that was refused stays the ended session it was.
    expect((await api("GET", `/v1/sessions/${id}`)).body.status).toBe("killed");
    expect(await denials()).toEqual(
      expect.arrayContaining([`POST /v1/sessions/${id}/fork`, `POST /v1/sessions/${id}/resume`]),
    );
    expect(paneDirs()).not.toContain(secret);
  }, 40_000);
});

describe("a headless session reopened after ag restarts", () => {
  test("ends crashed, saying why, when its folder now leads into another tenant's root", async () => {
    const dir = folder("headless");
    const created = await api("POST", "/v1/sessions", {
      agent: "gemini",
      driver: "acp",
      workDir: dir,
      agentCommand: [process.execPath, FAKE_ACP, "--state", fakeState].join(" "),
      prompt: "say hello",
    });
    expect(created.status).toBe(201);
    const id = created.body.id as string;
    await until(async () => (await api("GET", `/v1/sessions/${id}`)).body.status === "idle", 15_000);
    await ag.drain(200);
    ag.close();
    swapForLink(dir, secret);
    ag = await startTestRuntime(env, { home, configFile });
    await until(async () => (await api("GET", `/v1/sessions/${id}`)).body.status === "crashed", 15_000);
    const ended = (await api("GET", `/v1/sessions/${id}`)).body;
    expect(ended.endReason).toBe(
      `launch failed: not reopened: workDir ${dir} is outside its root for tenant acme`,
    );
    // What it said before is still there to read.
    expect((await api("GET", `/v1/sessions/${id}/read`)).body.output).toBe("Hello from the fake agent!");
  }, 60_000);
});
