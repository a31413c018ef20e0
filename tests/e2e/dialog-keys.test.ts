import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { chmodSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { type AgentWorld, startAgentWorld } from "../helpers/agent-world.ts";
import { tempDir } from "../helpers/temp.ts";
import { until } from "../helpers/until.ts";

// biome-ignore lint/suspicious/noExplicitAny: response bodies are inspected field by field
type Json = Record<string, any>;

/**
 * The REAL agent CLI's start-up dialogs answered through approve/reject. Each preselects a
 * different option, so these prove the keys, not only that some were sent. The dialogs are
 * made to show deterministically: an API key the seeded HOME has never seen, and a bypass launch
 * whose settings file no longer skips the disclaimer.
 */
let world: AgentWorld;
let bypassAgent: string;

beforeAll(async () => {
  world = await startAgentWorld();
  // ag's settings file (the argument after --settings) skips the bypass-permissions disclaimer;
  // this agentCommand turns that off before it starts the agent.
  bypassAgent = join(tempDir("ag-bypass-"), "claude-with-disclaimer");
  writeFileSync(
    bypassAgent,
    [
      "#!/bin/sh",
      'for arg; do case "$arg" in *.json) sed -i \'s/"skipDangerousModePermissionPrompt": true/"skipDangerousModePermissionPrompt": false/\' "$arg";; esac; done',
      'exec claude "$@"',
      "",
    ].join("\n"),
  );
  chmodSync(bypassAgent, 0o755);
}, 120_000);
afterAll(async () => {
  await world?.stop();
});

async function onDialog(body: Json, dialog: string): Promise<string> {
  // A workDir of its own: an idle session of the same workDir would be reused instead.
  const created = await world.api<Json>("POST", "/v1/sessions", { workDir: tempDir("ag-dialog-"), ...body });
  expect(created.status).toBe(201);
  const id = created.body.id as string;
  const session = await world.waitFor(id, "permission_prompt");
  expect(session.pendingPermission).toMatchObject({ kind: "trust", dialog });
  return id;
}

async function answer(id: string, verb: "approve" | "reject"): Promise<void> {
  const answered = await world.api<Json>("POST", `/v1/sessions/${id}/${verb}`);
  expect(answered.status).toBe(200);
}

/** Polls the session's screen until it matches (a test helper). */
async function paneShows(id: string, pattern: RegExp): Promise<void> {
  for (const deadline = Date.now() + 10_000; !pattern.test(await pane(id)); await Bun.sleep(100))
    if (Date.now() > deadline) throw new Error(`the screen never showed ${pattern}:\n${await pane(id)}`);
}

async function pane(id: string): Promise<string> {
  return (await world.api<Json>("GET", `/v1/sessions/${id}/pane`)).body.content as string;
}

function apiKeyResponses(): { approved: string[]; rejected: string[] } {
  return JSON.parse(readFileSync(join(world.env.HOME!, ".claude.json"), "utf8")).customApiKeyResponses;
}

/**
 * Waits until the agent has written its answer about `key` to its config: Claude Code saves
 * ~/.claude.json on its own schedule, which on a busy machine can come after the session reads
 * idle (a loaded run read the file before it). Bounded: a hang guard, not a measurement.
 */
async function recorded(key: string): Promise<{ approved: string[]; rejected: string[] }> {
  const mark = key.slice(-20);
  await until(() => {
    const { approved = [], rejected = [] } = apiKeyResponses() ?? {};
    return approved.includes(mark) || rejected.includes(mark);
  }, 15_000);
  return apiKeyResponses();
}

describe("the bypass-permissions disclaimer", () => {
  // Rejected first: accepting it may be remembered in the agent's own settings.
  test("reject picks the preselected 'No, exit': the agent quits", async () => {
    const id = await onDialog(
      { permissionMode: "bypassPermissions", agentCommand: bypassAgent },
      "bypass-permissions",
    );
    await answer(id, "reject");
    // "No, exit" ends the agent with status 1.
    await world.waitFor(id, "crashed");
  }, 90_000);

  test("approve picks 'Yes, I accept': the agent starts in bypass mode", async () => {
    const id = await onDialog(
      { permissionMode: "bypassPermissions", agentCommand: bypassAgent },
      "bypass-permissions",
    );
    await answer(id, "approve");
    await world.waitFor(id, "idle");
    expect(await pane(id)).toContain("bypass permissions on");
  }, 90_000);
});

describe("the custom API key dialog", () => {
  test("approve picks 'Yes' (not the preselected 'No'): the agent records the key as approved", async () => {
    const key = "sk-ant-test-dialog-approve-0000000000001";
    const id = await onDialog({ env: { ANTHROPIC_API_KEY: key } }, "api-key");
    await answer(id, "approve");
    await world.waitFor(id, "idle");
    const answered = await recorded(key);
    expect(answered.approved).toContain(key.slice(-20));
    expect(answered.rejected).not.toContain(key.slice(-20));
  }, 90_000);

  test("reject picks 'No (recommended)': the agent records the key as rejected", async () => {
    const key = "sk-ant-test-dialog-reject-00000000000002";
    const id = await onDialog({ env: { ANTHROPIC_API_KEY: key } }, "api-key");
    await answer(id, "reject");
    // The agent goes on without the key.
    await world.waitFor(id, "idle");
    const answered = await recorded(key);
    expect(answered.rejected).toContain(key.slice(-20));
    expect(answered.approved).not.toContain(key.slice(-20));
  }, 90_000);
});

describe("a plan's approval dialog", () => {
  /** A session in plan mode whose agent writes a plan and asks to leave plan mode. */
  async function planWaiting(): Promise<string> {
    const created = await world.api<Json>("POST", "/v1/sessions", {
      workDir: tempDir("ag-plan-"),
      permissionMode: "plan",
      prompt: "make a plan",
    });
    expect(created.status).toBe(201);
    expect(created.body.promptDelivery).toMatchObject({ delivered: true });
    const id = created.body.id as string;
    const waiting = await world.waitFor(id, "permission_prompt");
    expect(waiting.pendingPermission).toMatchObject({ kind: "plan", tool: "ExitPlanMode" });
    // The plan hook comes before its dialog is drawn: the screen shows it a moment later.
    await paneShows(id, /Would you like to proceed\?/);
    return id;
  }

  test("approve picks 'Yes, manually approve edits': the agent is told yes and goes on", async () => {
    const id = await planWaiting();
    await answer(id, "approve");
    await world.waitFor(id, "idle");
    const output = (await world.api<Json>("GET", `/v1/sessions/${id}/read`)).body.output as string;
    expect(output).toContain("Plan answer:");
    expect(output).toMatch(/approved/i);
    // Option 2 keeps the session's own mode; option 1 would have switched the agent to auto mode.
    expect(await pane(id)).not.toMatch(/plan mode on|auto mode on|accept edits on/);
  }, 90_000);

  test("reject declines the plan: the turn ends, still in plan mode", async () => {
    const id = await planWaiting();
    await answer(id, "reject");
    await world.waitFor(id, "idle");
    // "User rejected Claude's plan" (2.1.197), "Rejected Claude's plan" (2.1.328).
    await paneShows(id, /Rejected Claude's plan/i);
    // The footer is drawn after the rejection's text: one capture can fall between the two on a
    // busy machine (the plan's box half drawn, no footer yet), so wait for the redraw to finish.
    await paneShows(id, /plan mode on/);
  }, 90_000);
});
