import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { copyFileSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { type AgentWorld, startAgentWorld } from "../helpers/agent-world.ts";

// biome-ignore lint/suspicious/noExplicitAny: response bodies are inspected field by field
type Json = Record<string, any>;

/**
 * The folder-trust dialog on the REAL agent CLI although ag pre-accepted the folder: what
 * happens when another Claude Code process of the same HOME writes its older copy of
 * ~/.claude.json over the entry ag wrote (seen under load; reproduced against 2.1.197 with
 * concurrent writers). Made deterministic here: the session's agentCommand puts such an older
 * copy back right before it starts the agent, after ag's write.
 */
let world: AgentWorld;

beforeAll(async () => {
  world = await startAgentWorld();
}, 60_000);
afterAll(async () => {
  await world?.stop();
});

describe("a folder-trust dialog the config lost", () => {
  test("ag answers it itself, notes it, and the prompt is delivered without a trust prompt", async () => {
    const home = world.env.HOME!;
    const configFile = join(home, ".claude.json");
    const stale = join(home, "stale-claude.json");
    // The seeded config, from before ag trusted the world's workDir.
    copyFileSync(configFile, stale);
    expect(JSON.parse(readFileSync(stale, "utf8")).projects[world.workDir]).toBeUndefined();
    const created = await world.api<Json>("POST", "/v1/sessions", {
      workDir: world.workDir,
      prompt: "say hello",
      agentCommand: `sh -c 'cp ${stale} ${configFile} && exec claude "$@"' sh`,
    });
    expect(created.status).toBe(201);
    expect(created.body.promptDelivery).toMatchObject({ delivered: true });
    const id = created.body.id as string;
    await world.waitFor(id, "idle");
    expect(world.prompts()).toEqual(["say hello"]);

    const diagnostics = (await world.api<Json>("GET", "/v1/diagnostics?limit=500")).body.events as Json[];
    const mine = diagnostics.filter((e) => String(e.detail).includes(id));
    const answers = mine.filter((e) => e.type === "session.auto_answer");
    expect(answers).toHaveLength(1);
    expect(answers[0]!.detail).toContain("folder-trust dialog");
    // Never a permission prompt: the user was not asked.
    expect(
      mine
        .filter((e) => e.type === "state.change")
        .map((e) => e.detail)
        .join("\n"),
    ).not.toContain("permission_prompt");
    const session = (await world.api<Json>("GET", `/v1/sessions/${id}`)).body;
    expect(session.pendingPermission).toBeNull();
    // The agent itself recorded the answer in its config.
    const config = JSON.parse(readFileSync(configFile, "utf8"));
    expect(config.projects[world.workDir]).toMatchObject({ hasTrustDialogAccepted: true });
  }, 90_000);
});
