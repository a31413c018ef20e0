import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import {
  chmodSync,
  chownSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { dirname, join } from "node:path";
import { seedAgentHome } from "../helpers/agent-home.ts";
import { type AgentWorld, startAgentWorld } from "../helpers/agent-world.ts";
import { agEnv, compiledBinary, runAg } from "../helpers/binary.ts";
import { atRunEnd } from "../helpers/cleanup.ts";
import { tempDir } from "../helpers/temp.ts";

// biome-ignore lint/suspicious/noExplicitAny: response bodies are inspected field by field
type Json = Record<string, any>;

/**
 * Tenants kept apart for real (docs/security.md, "Keeping tenants apart"): two OS users made
 * here, two tenants whose `runAs` they are, each root the user's own (0700). A session of tenant
 * A — REAL Claude Code through the mock model, on the terminal driver and headless over ACP —
 * runs its commands as A: `id -u` is A's uid; ag's /proc/<pid>/environ, its state.db and its
 * state folder's listing are closed to it, and so is tenant B's root; its own session files (hook
 * settings, the MCP config holding its key) are readable. A verification step of the session
 * runs as A too. Needs root (useradd, setpriv): CI runs as root.
 */
const isRoot = process.getuid?.() === 0;
if (!isRoot) console.log("run-as.test.ts skipped: making OS users and switching to them needs root");

interface User {
  name: string;
  uid: number;
  gid: number;
  home: string;
  root: string;
}

/** A fresh OS user (removed, home and all, when the run ends, whatever happened). */
function makeUser(tenantRoots: string): User {
  const name = `agra${process.pid.toString(36)}${Math.random().toString(36).slice(2, 7)}`;
  const made = Bun.spawnSync(["useradd", "--create-home", "--shell", "/bin/sh", name], { stderr: "pipe" });
  if (made.exitCode !== 0) throw new Error(`useradd ${name}: ${made.stderr.toString()}`);
  atRunEnd(() => {
    Bun.spawnSync(["userdel", "--remove", "--force", name], { stderr: "ignore" });
  });
  const uid = Number(Bun.spawnSync(["id", "-u", name], { stdout: "pipe" }).stdout.toString().trim());
  const gid = Number(Bun.spawnSync(["id", "-g", name], { stdout: "pipe" }).stdout.toString().trim());
  const home = `/home/${name}`;
  chmodSync(home, 0o700);
  // What an operator does once per user: its Claude Code set up (here: for the mock model), its
  // tenant's root trusted, all of it the user's own.
  const root = join(tenantRoots, name);
  mkdirSync(root, { mode: 0o700 });
  seedAgentHome(home, { trust: [root] });
  chownTree(home, uid, gid);
  chownSync(root, uid, gid);
  chmodSync(root, 0o700);
  return { name, uid, gid, home, root };
}

function chownTree(path: string, uid: number, gid: number): void {
  Bun.spawnSync(["chown", "-R", `${uid}:${gid}`, path]);
}

/** Opens a folder this test made (a temp dir is 0700) for other users to pass through. */
function passable(dir: string): void {
  chmodSync(dir, 0o711);
}

let world: AgentWorld;
let a: User;
let b: User;
let tenantAKey: string;

beforeAll(async () => {
  if (!isRoot) return;
  const roots = tempDir("ag-runas-");
  passable(roots);
  a = makeUser(roots);
  b = makeUser(roots);
  // The agents' hooks run `ag hook`, and their MCP server `ag mcp`: ag's program must be
  // reachable by the users (ag refuses to start otherwise); the build's temp folder is 0700.
  passable(dirname(dirname(await compiledBinary())));
  world = await startAgentWorld(
    {},
    {
      beforeStart(root) {
        passable(root);
        writeFileSync(
          join(root, "svc.config.json"),
          JSON.stringify({
            tenantWorkdirs: {
              "tenant-a": { root: a.root, runAs: a.name },
              "tenant-b": { root: b.root, runAs: b.name },
            },
          }),
        );
      },
    },
  );
  const key = await world.api<Json>("POST", "/v1/auth/keys", {
    name: "tenant a",
    scopes: ["sessions:read", "sessions:write"],
    tenantId: "tenant-a",
  });
  expect(key.status).toBe(201);
  tenantAKey = key.body.key;
}, 120_000);
afterAll(async () => {
  await world?.stop();
});

/** A request with tenant A's key. */
async function asTenantA(
  method: string,
  path: string,
  body?: unknown,
): Promise<{ status: number; body: Json }> {
  const response = await fetch(`http://127.0.0.1:${world.env.SVC_PORT}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${tenantAKey}`,
      ...(body === undefined ? {} : { "content-type": "application/json" }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : undefined };
}

async function createForA(body: Json): Promise<string> {
  const created = await asTenantA("POST", "/v1/sessions", {
    workDir: a.root,
    prompt: "say hello",
    // Claude Code's scratch folder: the world's (ag's HOME) is not the user's to write.
    env: { CLAUDE_CODE_TMPDIR: join(a.home, "tmp") },
    ...body,
  });
  expect(created.status).toBe(201);
  const id = created.body.id as string;
  await world.waitFor(id, "idle", 90_000);
  return id;
}

/**
 * The agent runs one shell line (the mock's Bash), approved, that writes what it could do to
 * `file` in tenant A's root; answers its lines.
 */
async function agentReport(id: string, file: string, ownFile: string): Promise<string[]> {
  const state = world.env.SVC_STATE_DIR!;
  const probe = (what: string, command: string) =>
    `${command} >/dev/null 2>&1 && echo ${what}:yes || echo ${what}:no`;
  const line = [
    "id -u",
    probe("environ", `cat /proc/${world.ag.proc.pid}/environ`),
    probe("statedb", `cat ${join(state, "state.db")}`),
    probe("statelist", `ls ${state}`),
    probe("tenantb", `ls ${b.root}`),
    probe("own", `cat ${ownFile}`),
  ].join("; ");
  await asTenantA("POST", `/v1/sessions/${id}/send`, { text: `run cmd: { ${line}; } > ${file}` });
  const waiting = await world.waitFor(id, "permission_prompt", 60_000);
  await asTenantA("POST", `/v1/sessions/${id}/approve`, {
    permissionId: (waiting.pendingPermission as Json).id,
  });
  await world.waitFor(id, "idle", 60_000);
  const path = join(a.root, file);
  for (let i = 0; i < 50 && !existsSync(path); i++) await Bun.sleep(100);
  return readFileSync(path, "utf8").trim().split("\n");
}

describe.skipIf(!isRoot)("tenants kept apart: agents under their tenant's OS user", () => {
  test("terminal: the agent is A; ag's environ, state.db and state folder, and B's root are closed to it; its own hook settings are not", async () => {
    const id = await createForA({ agent: "claude" });
    const dir = join(world.env.SVC_STATE_DIR!, "sessions", id);
    // Named exactly: the folder is the user's to enter, not to list (no glob expands in it).
    const settings = readdirSync(dir).find((name) => name.startsWith("settings-"))!;
    const lines = await agentReport(id, "report-tmux.txt", join(dir, settings));
    expect(lines).toEqual([
      String(a.uid),
      "environ:no",
      "statedb:no",
      "statelist:no",
      "tenantb:no",
      "own:yes",
    ]);
    // ag reads the conversation A's Claude Code wrote in A's HOME (its hooks, run as A, named it).
    const read = (await asTenantA("GET", `/v1/sessions/${id}/read`)).body;
    expect(read.output).toContain("Command finished");
    // The folder is ag's, A's to enter; the launch's files are A's alone; ag's own state is not A's.
    expect(statSync(dir)).toMatchObject({ uid: 0, gid: a.gid });
    expect(statSync(dir).mode & 0o777).toBe(0o710);
    expect(statSync(join(dir, settings))).toMatchObject({ uid: a.uid });
    expect(statSync(join(dir, settings)).mode & 0o777).toBe(0o600);
    expect(statSync(world.env.SVC_STATE_DIR!).mode & 0o777).toBe(0o711);
    expect(statSync(join(world.env.SVC_STATE_DIR!, "state.db")).mode & 0o777).toBe(0o600);
    await asTenantA("DELETE", `/v1/sessions/${id}`);
  }, 200_000);

  test("headless: the same, and the MCP config holding its session key is its own to read", async () => {
    const id = await createForA({ agent: "claude", driver: "acp", offerMcp: true });
    const file = join(world.env.SVC_STATE_DIR!, "sessions", id, "mcp-config.json");
    const lines = await agentReport(id, "report-acp.txt", file);
    expect(lines).toEqual([
      String(a.uid),
      "environ:no",
      "statedb:no",
      "statelist:no",
      "tenantb:no",
      "own:yes",
    ]);
    expect(statSync(file)).toMatchObject({ uid: a.uid });
    expect(statSync(file).mode & 0o777).toBe(0o600);
    // ag's own record of the headless session stays ag's.
    expect(statSync(join(dirname(file), "acp-transcript.jsonl")).uid).toBe(0);
    // A verification step of the session runs as A as well.
    writeFileSync(
      join(a.root, "package.json"),
      JSON.stringify({ name: "p", scripts: { build: "id -u > verify-uid.txt" } }),
    );
    const verified = await asTenantA("POST", `/v1/sessions/${id}/verify`, {});
    expect(verified.body.steps.find((s: Json) => s.name === "build")?.ok).toBe(true);
    expect(readFileSync(join(a.root, "verify-uid.txt"), "utf8").trim()).toBe(String(a.uid));
    await asTenantA("DELETE", `/v1/sessions/${id}`);
  }, 200_000);

  test("ag refuses to start when a tenant's runAs cannot be kept apart: the config error names the tenant", async () => {
    const cwd = tempDir();
    const env = agEnv();
    const cases: Array<[string, string, () => void]> = [
      ["no-such-user-ag", "no such OS user", () => {}],
      ["root", "the user is root", () => {}],
      // ag's state folder is in its HOME, a temp dir (0700): its users could not reach their files.
      [b.name, `the folder ${env.HOME} above ag's state folder is closed to the user`, () => {}],
      [b.name, "belongs to uid", () => passable(env.HOME!)],
    ];
    for (const [runAs, why, before] of cases) {
      before();
      // tenant c's root is A's: B cannot be its runAs.
      writeFileSync(
        join(cwd, "svc.config.json"),
        JSON.stringify({ tenantWorkdirs: { "tenant-c": { root: a.root, runAs } } }),
      );
      const run = await runAg(await compiledBinary(), [], { env, cwd });
      expect(run.exitCode).not.toBe(0);
      expect(run.stderr).toContain(`tenantWorkdirs.tenant-c.runAs (${runAs})`);
      expect(run.stderr).toContain(why);
      expect(run.stderr).toContain("CONFIG_INVALID");
    }
  }, 60_000);
});
