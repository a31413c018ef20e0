import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { type AgentWorld, startAgentWorld } from "../helpers/agent-world.ts";

// biome-ignore lint/suspicious/noExplicitAny: response bodies are inspected field by field
type Json = Record<string, any>;

/**
 * The boundary between ag and the agents it runs (docs/sessions.md, "What an agent inherits"), on
 * the REAL Claude Code and the compiled binary, as root, with ag started from an environment that
 * holds its master token, a sentinel secret in ag's namespace, a setting, and IS_SANDBOX=yes (as
 * many container hosts set it). An agent's `printenv` — on either driver — and a verification
 * step's see none of them; no process ag starts carries a secret in its argv; a restarted ag's
 * new variable reaches a new terminal session although the tmux server is the earlier one's.
 */
const TOKEN = "master-token-4a1f9e0c2b7d";
const SENTINEL = "sentinel-secret-77c1d0e5";
const SETTING = "setting-sentinel-3b9e";
const SECRETS = [TOKEN, SENTINEL, SETTING];

let world: AgentWorld;

beforeAll(async () => {
  world = await startAgentWorld({
    SVC_AUTH_TOKEN: TOKEN,
    AG_TEST_SENTINEL: SENTINEL,
    MODEL_FAST: SETTING,
    IS_SANDBOX: "yes",
  });
}, 60_000);
afterAll(async () => {
  await world?.stop();
});

const create = async (body: Json) => {
  const created = await world.api<Json>("POST", "/v1/sessions", { workDir: world.workDir, ...body });
  expect(created.status).toBe(201);
  return created.body.id as string;
};

/** The agent runs `printenv > file` (the mock's Bash), approved; answers the file's variables. */
async function printenvOf(id: string, file: string): Promise<Record<string, string>> {
  await world.api("POST", `/v1/sessions/${id}/send`, { text: `run cmd: printenv > ${file}` });
  const waiting = await world.waitFor(id, "permission_prompt", 60_000);
  await world.api("POST", `/v1/sessions/${id}/approve`, {
    permissionId: (waiting.pendingPermission as Json).id,
  });
  await world.waitFor(id, "idle", 60_000);
  const path = join(world.workDir, file);
  for (let i = 0; i < 50 && !existsSync(path); i++) await Bun.sleep(100);
  const text = readFileSync(path, "utf8");
  for (const secret of SECRETS) expect(text).not.toContain(secret);
  return Object.fromEntries(
    text.split("\n").map((line) => [line.split("=")[0], line.slice(line.indexOf("=") + 1)]),
  );
}

/** Every live process's command line. */
function commandLines(): string[] {
  return readdirSync("/proc")
    .filter((entry) => /^\d+$/.test(entry))
    .flatMap((pid) => {
      try {
        return [readFileSync(`/proc/${pid}/cmdline`, "utf8").replaceAll("\0", " ")];
      } catch {
        return [];
      }
    });
}

describe("what an agent inherits", () => {
  test("headless Claude Code as root with IS_SANDBOX=yes inherited starts in default, plan and acceptEdits", async () => {
    for (const permissionMode of ["default", "plan", "acceptEdits"]) {
      const id = await create({ agent: "claude", driver: "acp", permissionMode, prompt: "say hello" });
      const session = await world.waitFor(id, "idle", 60_000);
      expect(session.permissionMode).toBe(permissionMode);
      await world.api("DELETE", `/v1/sessions/${id}`);
    }
  }, 200_000);

  test("headless: printenv shows no token, sentinel, setting nor IS_SANDBOX; the session's own variable is there", async () => {
    const id = await create({ agent: "claude", driver: "acp", prompt: "say hello" });
    await world.waitFor(id, "idle", 60_000);
    const env = await printenvOf(id, "env-acp.txt");
    expect(env.SVC_SESSION_ID).toBe(id);
    expect(env.IS_SANDBOX).toBeUndefined();
    expect(env.SVC_AUTH_TOKEN).toBeUndefined();
    await world.api("DELETE", `/v1/sessions/${id}`);
  }, 120_000);

  test("terminal: printenv shows none of them either", async () => {
    const id = await create({ agent: "claude", prompt: "say hello" });
    await world.waitFor(id, "idle", 60_000);
    const env = await printenvOf(id, "env-tmux.txt");
    expect(env.SVC_SESSION_ID).toBe(id);
    expect(env.IS_SANDBOX).toBeUndefined();
    await world.api("DELETE", `/v1/sessions/${id}`);
  }, 120_000);

  test("a verification step's environment has none of them", async () => {
    const id = await create({ agent: "claude", driver: "acp", prompt: "say hello" });
    await world.waitFor(id, "idle", 60_000);
    writeFileSync(
      join(world.workDir, "package.json"),
      JSON.stringify({ name: "p", scripts: { build: "printenv > env-verify.txt" } }),
    );
    const verified = await world.api<Json>("POST", `/v1/sessions/${id}/verify`, {});
    expect(verified.body.steps.find((s: Json) => s.name === "build")?.ok).toBe(true);
    const text = readFileSync(join(world.workDir, "env-verify.txt"), "utf8");
    expect(text).toContain("PATH=");
    for (const secret of SECRETS) expect(text).not.toContain(secret);
    await world.api("DELETE", `/v1/sessions/${id}`);
  }, 120_000);

  test("no process ag starts carries a key or token in its argv: the offered MCP server reads its key from a 0600 file", async () => {
    const id = await create({ agent: "claude", driver: "acp", offerMcp: true, prompt: "say hello" });
    await world.waitFor(id, "idle", 60_000);
    const file = join(world.env.SVC_STATE_DIR!, "sessions", id, "mcp-config.json");
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const key = JSON.parse(readFileSync(file, "utf8")).authToken as string;
    expect(key).toStartWith("agk_");
    // The agent starts its MCP servers at its start: `ag mcp --config <file>` is running now.
    let lines: string[] = [];
    for (let i = 0; i < 100; i++) {
      lines = commandLines();
      if (lines.some((line) => line.includes("mcp --config"))) break;
      await Bun.sleep(100);
    }
    expect(lines.some((line) => line.includes("mcp --config"))).toBe(true);
    for (const line of lines) {
      for (const secret of [...SECRETS, key]) expect(line).not.toContain(secret);
      expect(line).not.toMatch(/agk_[A-Za-z0-9_-]{20}/);
    }
    await world.api("DELETE", `/v1/sessions/${id}`);
    expect(existsSync(file)).toBe(false);
  }, 120_000);

  test("after ag restarts with a new variable, a new terminal session has it (the tmux server is the earlier one's)", async () => {
    world.env.AG_LATER = "later-secret";
    world.env.LATER_VARIABLE = "set-after-the-first-start";
    await world.restart();
    const id = await create({ agent: "claude", prompt: "say hello" });
    await world.waitFor(id, "idle", 60_000);
    const env = await printenvOf(id, "env-later.txt");
    expect(env.LATER_VARIABLE).toBe("set-after-the-first-start");
    expect(env.AG_LATER).toBeUndefined();
    await world.api("DELETE", `/v1/sessions/${id}`);
  }, 150_000);
});
