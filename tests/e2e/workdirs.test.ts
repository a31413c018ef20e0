import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, readFileSync, realpathSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { type AgentWorld, startAgentWorld } from "../helpers/agent-world.ts";

// biome-ignore lint/suspicious/noExplicitAny: response bodies are inspected field by field
type Json = Record<string, any>;

/**
 * workDirs as callers write them (issue 15): SPEC's pipeline body without one, `..` segments and
 * symlinks. The REAL agent CLI through the compiled binary, a few sessions.
 */
let world: AgentWorld;
beforeAll(async () => {
  world = await startAgentWorld();
}, 60_000);
afterAll(async () => {
  await world?.stop();
});

function trustedFolders(): string[] {
  const config = JSON.parse(readFileSync(join(world.env.HOME!, ".claude.json"), "utf8"));
  return Object.entries(config.projects ?? {})
    .filter(([, p]) => (p as Json).hasTrustDialogAccepted)
    .map(([dir]) => dir);
}

describe("workDirs as callers write them", () => {
  test("SPEC's pipeline body (no workDir) gets a 400 that says what to add", async () => {
    const refused = await world.api<Json>("POST", "/v1/pipelines", {
      name: "p",
      stages: [{ prompt: "say hello" }],
    });
    expect(refused.status).toBe(400);
    expect(refused.body.code).toBe("VALIDATION_ERROR");
    expect(refused.body.error).toContain("body.workDir");
    expect(refused.body.error).toContain('"workDir":"/absolute/path/to/project"');
    expect((await world.api<Json[]>("GET", "/v1/pipelines")).body).toEqual([]);
  });

  test("a workDir with `..` is stored, listed, run in and trusted as its real path", async () => {
    mkdirSync(join(world.workDir, "dots", "p"), { recursive: true });
    const real = realpathSync(join(world.workDir, "dots", "p"));
    const raw = `${real}/../../dots/p/./`;
    const created = await world.api<Json>("POST", "/v1/sessions", { workDir: raw, prompt: "say hello" });
    expect(created.status).toBe(201);
    expect(created.body.workDir).toBe(real);
    expect(created.body.promptDelivery).toMatchObject({ delivered: true });
    const listed = (await world.api<Json[]>("GET", "/v1/sessions")).body.find(
      (s) => s.id === created.body.id,
    );
    expect(listed?.workDir).toBe(real);
    await world.waitFor(created.body.id, "idle", 60_000);
    expect(world.prompts().at(-1)).toBe("say hello");
    // The agent runs in the real path.
    const panes = Bun.spawnSync(
      ["tmux", "-L", world.env.SVC_TMUX_SOCKET!, "list-panes", "-a", "-F", "#{pane_current_path}"],
      { env: world.env },
    );
    expect(panes.stdout.toString().split("\n")).toContain(real);
    // ag trusted the folder the session runs in, never the raw string.
    expect(trustedFolders()).toContain(real);
    expect(trustedFolders().some((dir) => dir.includes(".."))).toBe(false);
    await world.api("DELETE", `/v1/sessions/${created.body.id}`);
  }, 90_000);

  test("a symlinked workDir is stored as its real path, for sessions, templates and pipelines", async () => {
    mkdirSync(join(world.workDir, "target"));
    const real = realpathSync(join(world.workDir, "target"));
    const link = join(world.workDir, "link");
    symlinkSync(real, link);
    const session = await world.api<Json>("POST", "/v1/sessions", { workDir: link });
    expect(session.status).toBe(201);
    expect(session.body.workDir).toBe(real);
    await world.api("DELETE", `/v1/sessions/${session.body.id}`);

    const template = await world.api<Json>("POST", "/v1/templates", { name: "linked", workDir: link });
    expect(template.status).toBe(201);
    expect(template.body.workDir).toBe(real);

    const pipeline = await world.api<Json>("POST", "/v1/pipelines", {
      name: "linked",
      workDir: link,
      stages: [{ prompt: "say hello" }],
    });
    expect(pipeline.status).toBe(201);
    expect(pipeline.body.workDir).toBe(real);
    const deadline = Date.now() + 60_000;
    let body: Json = pipeline.body;
    while (!["completed", "failed"].includes(body.status) && Date.now() < deadline) {
      await Bun.sleep(200);
      body = (await world.api<Json>("GET", `/v1/pipelines/${pipeline.body.id}`)).body;
    }
    expect(body.status).toBe("completed");
    const stage = (await world.api<Json>("GET", `/v1/sessions/${body.stages[0].sessionId}`)).body;
    expect(stage.workDir).toBe(real);
  }, 120_000);
});
