import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { type AgentWorld, startAgentWorld } from "../helpers/agent-world.ts";

// biome-ignore lint/suspicious/noExplicitAny: response bodies are inspected field by field
type Json = Record<string, any>;

/** Fork, resume and spawn on the REAL agent CLI: conversations and panes must really be there. */
let world: AgentWorld;
beforeAll(async () => {
  world = await startAgentWorld();
}, 60_000);
afterAll(async () => {
  await world?.stop();
});

const mainRequests = () => world.mock.requests().filter((r) => r.kind === "main");

describe("fork, resume and spawn on the real agent CLI", () => {
  let parent: string;

  test("fork: a new session in the same workDir whose model requests carry the parent's conversation", async () => {
    const created = await world.api<Json>("POST", "/v1/sessions", {
      workDir: world.workDir,
      prompt: "remember the word PARSNIP",
    });
    parent = created.body.id;
    await world.waitFor(parent, "idle");

    const forked = await world.api<Json>("POST", `/v1/sessions/${parent}/fork`);
    expect(forked.status).toBe(201);
    expect(forked.body).toMatchObject({ forkedFrom: parent, workDir: world.workDir, reused: false });
    const child = forked.body.id as string;
    expect(child).not.toBe(parent);
    await world.waitFor(child, "idle");

    const before = mainRequests().length;
    const sent = await world.api("POST", `/v1/sessions/${child}/send`, { text: "what was the word?" });
    expect(sent.body).toEqual({ delivered: true, attempts: 1 });
    await world.waitFor(child, "idle");
    const first = mainRequests()[before]!;
    expect(first.prompt).toBe("what was the word?");
    expect(first.history).toEqual(["remember the word PARSNIP", "what was the word?"]);
    // The parent is untouched by its branch.
    expect((await world.api<Json>("GET", `/v1/sessions/${parent}`)).body.status).toBe("idle");
    await world.api("DELETE", `/v1/sessions/${child}`);
  }, 90_000);

  test("resume: an ended session relaunches and continues its own conversation", async () => {
    const killed = await world.api<Json>("DELETE", `/v1/sessions/${parent}`);
    expect(killed.body.status).toBe("killed");
    const resumed = await world.api<Json>("POST", `/v1/sessions/${parent}/resume`);
    expect(resumed.status).toBe(200);
    expect(resumed.body.id).toBe(parent);
    await world.waitFor(parent, "idle");

    const before = mainRequests().length;
    const sent = await world.api("POST", `/v1/sessions/${parent}/send`, { text: "and now?" });
    expect(sent.body).toEqual({ delivered: true, attempts: 1 });
    await world.waitFor(parent, "idle");
    expect(mainRequests()[before]!.history).toEqual(["remember the word PARSNIP", "and now?"]);
    const read = await world.api<Json>("GET", `/v1/sessions/${parent}/read`);
    expect(read.body.output).toContain("Mock reply to: and now?");
  }, 90_000);

  test("spawn: a teammate runs its prompt in a new pane of the parent's window", async () => {
    const spawned = await world.api<Json>("POST", `/v1/sessions/${parent}/spawn`, {
      prompt: "say hello from the teammate",
    });
    expect(spawned.status).toBe(201);
    expect(spawned.body).toMatchObject({
      parentId: parent,
      workDir: world.workDir,
      promptDelivery: { delivered: true },
    });
    const child = spawned.body.id as string;
    await world.waitFor(child, "idle");
    expect((await world.api<Json>("GET", `/v1/sessions/${child}/read`)).body.output).toContain(
      "Hello from the mock model",
    );

    // Both agents share one tmux window, each in its own tagged pane.
    const listing = Bun.spawnSync([
      "tmux",
      "-L",
      world.env.SVC_TMUX_SOCKET!,
      "list-panes",
      "-a",
      "-F",
      "#{window_id} #{@svc_session_id}",
    ]).stdout.toString();
    const windowOf = (id: string) =>
      listing
        .split("\n")
        .find((l) => l.endsWith(` ${id}`))
        ?.split(" ")[0];
    expect(windowOf(child)).toBeDefined();
    expect(windowOf(child)).toBe(windowOf(parent));

    const health = await world.api<Json>("GET", `/v1/sessions/${child}/health`);
    expect(health.body).toMatchObject({ alive: true, status: "idle" });
    expect(health.body.agentPid).toBeGreaterThan(0);

    // The swarm: the teammate under its parent, and both agent processes found on the system,
    // each tied to its session.
    const swarm = (await world.api<Json>("GET", "/v1/swarm")).body;
    const parentNode = swarm.sessions.find((s: Json) => s.id === parent);
    expect(parentNode.children.map((c: Json) => c.id)).toEqual([child]);
    expect(swarm.sessions.some((s: Json) => s.id === child)).toBe(false);
    const managed = swarm.processes.filter((p: Json) => p.managed);
    expect(managed).toContainEqual(
      expect.objectContaining({ pid: health.body.agentPid, sessionId: child, cwd: world.workDir }),
    );
    expect(managed.some((p: Json) => p.sessionId === parent)).toBe(true);
    expect(swarm.summary).toMatchObject({ managed: managed.length });
    await world.api("DELETE", `/v1/sessions/${child}`);
    expect((await world.api<Json>("GET", `/v1/sessions/${parent}/health`)).body.alive).toBe(true);
  }, 90_000);

  test("all six permission modes launch to a usable prompt, each shown in the agent's footer", async () => {
    const footer: Record<string, RegExp> = {
      // 2.1.197 names no mode for default; 2.1.328 says "⏸ manual mode on".
      default: /\? for shortcuts|⏸ manual mode on/,
      acceptEdits: /accept edits on/,
      plan: /plan mode on/,
      auto: /auto mode on/,
      bypassPermissions: /bypass permissions on/,
      dontAsk: /don't ask on/,
    };
    for (const [mode, marker] of Object.entries(footer)) {
      const workDir = join(world.workDir, `mode-${mode}`);
      mkdirSync(workDir);
      const created = await world.api<Json>("POST", "/v1/sessions", { workDir, permissionMode: mode });
      expect(created.status).toBe(201);
      await world.waitFor(created.body.id, "idle");
      // The footer is drawn after the input box, a moment later on a loaded machine (a loaded run
      // read "auto" idle before its footer said so): the mode must show, not at the same instant.
      let content = "";
      for (const deadline = Date.now() + 10_000; !marker.test(content) && Date.now() < deadline; ) {
        content = (await world.api<Json>("GET", `/v1/sessions/${created.body.id}/pane`)).body.content ?? "";
        if (!marker.test(content)) await Bun.sleep(100);
      }
      expect({ mode, shows: marker.test(content), content }).toEqual({ mode, shows: true, content });
      await world.api("DELETE", `/v1/sessions/${created.body.id}`);
    }
  }, 120_000);
});
