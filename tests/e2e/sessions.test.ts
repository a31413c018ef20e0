import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { type AgentWorld, startAgentWorld } from "../helpers/agent-world.ts";
import { unframedPrompt } from "../helpers/paste-frame.ts";

// biome-ignore lint/suspicious/noExplicitAny: response bodies are inspected field by field
type Json = Record<string, any>;

/**
 * The session lifecycle on the REAL agent CLI, through the compiled binary. One agent session
 * at a time (each costs ~200 MB and a share of a core): the tests of this file run in order
 * against one world and mostly one session.
 */
let world: AgentWorld;
let id: string;

beforeAll(async () => {
  world = await startAgentWorld();
}, 60_000);
afterAll(async () => {
  await world?.stop();
});

describe("a session on the real agent CLI", () => {
  test("create with a prompt → delivered, confirmed → idle → /read has the reply", async () => {
    const created = await world.api<Json>("POST", "/v1/sessions", {
      workDir: world.workDir,
      prompt: "say hello",
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      reused: false,
      promptDelivery: { delivered: true, attempts: 1 },
      workDir: world.workDir,
    });
    id = created.body.id;
    // The version its launch ran is the installed CLI's, verified when its adapter is.
    const agents = await world.api<Json[]>("GET", "/v1/agents");
    const claude = agents.body.find((a) => a.id === "claude")!;
    expect(created.body.agentVersion).toMatch(/^\d+\.\d+\.\d+/);
    expect(created.body).toMatchObject({
      agentVersion: claude.version,
      verified: claude.verifiedVersions.includes(claude.version),
    });
    await world.waitFor(id, "idle");
    const read = await world.api<Json>("GET", `/v1/sessions/${id}/read`);
    expect(read.body.output).toContain("Hello from the mock model!");
    expect(read.body.tokenUsage.input).toBeGreaterThan(0);
    expect(read.body.tokenUsage.output).toBeGreaterThan(0);
    expect(world.prompts()).toEqual(["say hello"]);
    const metrics = await world.api<Json>("GET", `/v1/sessions/${id}/metrics`);
    expect(metrics.body.estimatedCost.usd).toBeGreaterThan(0);
    expect(metrics.body.deliveries).toEqual({ sent: 1, delivered: 1, failed: 0, attempts: 1 });
    // ag pre-accepted the folder trust in the agent's own config (no dialog appeared).
    const config = JSON.parse(readFileSync(join(world.env.HOME!, ".claude.json"), "utf8"));
    expect(config.projects[world.workDir]).toMatchObject({ hasTrustDialogAccepted: true });
  }, 60_000);

  test("a second create in the same workDir reuses the idle session (200)", async () => {
    const reused = await world.api<Json>("POST", "/v1/sessions", {
      workDir: world.workDir,
      prompt: "say hello again",
    });
    expect(reused.status).toBe(200);
    expect(reused.body).toMatchObject({ id, reused: true, promptDelivery: { delivered: true } });
    await world.waitFor(id, "idle");
    expect(world.prompts().at(-1)).toBe("say hello again");
  }, 60_000);

  test("memoryKeys from a template: the exact [Memory context] block reaches the model", async () => {
    for (const [key, value] of [
      ["project/style", "tabs, not spaces"],
      ["user/name", "Ada"],
    ]) {
      expect((await world.api("POST", "/v1/memory", { key, value, ttlSeconds: 3600 })).status).toBe(201);
    }
    const template = await world.api<Json>("POST", "/v1/templates", {
      name: "styled",
      workDir: world.workDir,
      memoryKeys: ["project/style", "user/missing", "user/name"],
    });
    expect(template.status).toBe(201);
    const created = await world.api<Json>("POST", "/v1/sessions", {
      templateId: template.body.id,
      prompt: "say hello with memory",
    });
    expect(created.body).toMatchObject({ id, reused: true, promptDelivery: { delivered: true } });
    expect(created.body.warnings).toEqual(["memory key not found: user/missing"]);
    await world.waitFor(id, "idle");
    expect(unframedPrompt(world.prompts().at(-1)!)).toBe(
      "[Memory context]\nproject/style: tabs, not spaces\nuser/name: Ada\n\nsay hello with memory",
    );
    // Each create is in the audit log, and the chain holds.
    const audit = await world.api<Json[]>("GET", "/v1/audit?limit=500");
    expect(audit.body.filter((r) => r.action === "session.create" && r.target === id).length).toBe(3);
    expect((await world.api<Json>("GET", "/v1/audit/verify")).body).toMatchObject({ ok: true });
  }, 60_000);

  test("a Bash permission: approve runs the command", async () => {
    const sent = await world.api("POST", `/v1/sessions/${id}/send`, { text: "run cmd: touch approved.txt" });
    expect(sent.body).toEqual({ delivered: true, attempts: 1 });
    const waiting = await world.waitFor(id, "permission_prompt");
    expect(waiting.pendingPermission).toMatchObject({
      kind: "tool",
      tool: "Bash",
      detail: "touch approved.txt",
    });
    const busy = await world.api<Json>("POST", `/v1/sessions/${id}/send`, { text: "hello?" });
    expect(busy.status).toBe(409);
    expect(busy.body.code).toBe("SESSION_BUSY");
    const wrong = await world.api<Json>("POST", `/v1/sessions/${id}/approve`, {
      permissionId: "perm-999",
    });
    expect(wrong.body.code).toBe("PERMISSION_MISMATCH");
    const approved = await world.api("POST", `/v1/sessions/${id}/approve`, {
      permissionId: (waiting.pendingPermission as { id: string }).id,
    });
    expect(approved.status).toBe(200);
    await world.waitFor(id, "idle");
    expect(existsSync(join(world.workDir, "approved.txt"))).toBe(true);
  }, 60_000);

  test("a Bash permission: reject does not run it", async () => {
    await world.api("POST", `/v1/sessions/${id}/send`, { text: "run cmd: touch rejected.txt" });
    await world.waitFor(id, "permission_prompt");
    expect((await world.api("POST", `/v1/sessions/${id}/reject`)).status).toBe(200);
    await world.waitFor(id, "idle");
    expect(existsSync(join(world.workDir, "rejected.txt"))).toBe(false);
    const none = await world.api<Json>("POST", `/v1/sessions/${id}/approve`);
    expect(none.body.code).toBe("NO_PENDING_PERMISSION");
  }, 60_000);

  test("a 30-line prompt and a 20 KB prompt each reach the model exactly, as one turn", async () => {
    const lines = Array.from({ length: 30 }, (_, i) => `line ${i + 1}: ${"·".repeat(i)}`).join("\n");
    const big = Array.from({ length: 400 }, (_, i) => `chunk ${i} ${"x".repeat(40)}`)
      .join(" ")
      .slice(0, 20_000);
    for (const text of [lines, big]) {
      const before = world.prompts().length;
      const sent = await world.api("POST", `/v1/sessions/${id}/send`, { text });
      expect(sent.body).toEqual({ delivered: true, attempts: 1 });
      await world.waitFor(id, "idle");
      // Once, whole: exactly the text, or (2.1.328) exactly the text in Claude Code's paste frame.
      expect(world.prompts().slice(before).map(unframedPrompt)).toEqual([text]);
    }
  }, 90_000);

  test("control characters are refused before anything is typed", async () => {
    const before = world.prompts().length;
    const refused = await world.api<Json>("POST", `/v1/sessions/${id}/send`, {
      text: "evil\u001b[2J",
    });
    expect(refused.status).toBe(400);
    expect(refused.body.code).toBe("VALIDATION_ERROR");
    expect(world.prompts().length).toBe(before);
  });

  test("the transcript cursor pages backwards without gaps or overlaps", async () => {
    const newest = await world.api<Json>("GET", `/v1/sessions/${id}/transcript/cursor?limit=3`);
    expect(newest.status).toBe(200);
    expect(newest.body.messages).toHaveLength(3);
    const older = await world.api<Json>(
      "GET",
      `/v1/sessions/${id}/transcript/cursor?limit=3&before_id=${newest.body.oldest_id}`,
    );
    expect(older.body.newest_id).toBe(newest.body.oldest_id - 1);
    const users = await world.api<Json>("GET", `/v1/sessions/${id}/transcript/cursor?role=user&limit=200`);
    expect(users.body.messages.some((m: { text: string }) => m.text === "say hello")).toBe(true);
  });

  test("a readonly profile: a Bash request is denied in the pre-tool hook, no permission prompt appears", async () => {
    const profile = await world.api<Json>("PUT", `/v1/sessions/${id}/permission-profile`, {
      profile: "readonly",
    });
    expect(profile.body).toMatchObject({ profile: "readonly", allowBash: false });
    const sent = await world.api("POST", `/v1/sessions/${id}/send`, { text: "run cmd: touch denied.txt" });
    expect(sent.body).toEqual({ delivered: true, attempts: 1 });
    const seen = new Set<string>();
    const deadline = Date.now() + 30_000;
    for (;;) {
      const status = (await world.api<Json>("GET", `/v1/sessions/${id}`)).body.status as string;
      seen.add(status);
      if (status === "idle" && seen.has("working")) break;
      if (Date.now() > deadline) throw new Error(`never idle again: ${[...seen]}`);
      await Bun.sleep(50);
    }
    expect(seen.has("permission_prompt")).toBe(false);
    expect(existsSync(join(world.workDir, "denied.txt"))).toBe(false);
    await world.api("PUT", `/v1/sessions/${id}/permission-profile`, { profile: "full" });
  }, 60_000);

  test("interrupt stops a running turn", async () => {
    await world.api("POST", `/v1/sessions/${id}/send`, { text: "slow 20" });
    await world.waitFor(id, "working");
    await Bun.sleep(1500);
    expect((await world.api("POST", `/v1/sessions/${id}/interrupt`)).status).toBe(200);
    await world.waitFor(id, "idle", 10_000);
  }, 60_000);

  test("kill -9 of ag mid-turn, restart: the session is re-adopted and its reply readable", async () => {
    await world.api("POST", `/v1/sessions/${id}/send`, { text: "slow 3" });
    await world.waitFor(id, "working");
    await world.restart("SIGKILL");
    expect(world.ag.stderr()).toContain("re-adopted 1 session(s)");
    const adopted = await world.waitFor(id, "idle", 30_000);
    // The version recorded at its launch stays: the re-adopted session is driven as that version.
    expect(adopted.agentVersion).toMatch(/^\d+\.\d+\.\d+/);
    const read = await world.api<Json>("GET", `/v1/sessions/${id}/read`);
    expect(read.body.output).toContain("streamed slowly");
    // The session still works after the restart: hooks reach the new server.
    const sent = await world.api("POST", `/v1/sessions/${id}/send`, { text: "say hello" });
    expect(sent.body).toEqual({ delivered: true, attempts: 1 });
    await world.waitFor(id, "idle");
  }, 90_000);

  test("GET /v1/agents: the CLI's help was probed at start, every flag ag launches it with is there", async () => {
    let claude: Json | undefined;
    const deadline = Date.now() + 30_000;
    while (!claude?.probe && Date.now() < deadline) {
      claude = (await world.api<Json[]>("GET", "/v1/agents")).body.find((a) => a.id === "claude");
      if (!claude?.probe) await Bun.sleep(250);
    }
    expect(claude!.probe).toMatchObject({ missingFlags: [], acp: true, hooks: true });
    expect(Object.keys(claude!.probe.flags)).toContain("--settings");
  }, 40_000);

  test("a CLI version ag is not verified on runs all the same: verified false, one warning in the log", async () => {
    // A `claude` of its own on the session's PATH, saying another version (and doing nothing).
    const bin = join(world.workDir, "..", "other-bin");
    mkdirSync(bin, { recursive: true });
    const fake = join(bin, "claude");
    writeFileSync(
      fake,
      '#!/bin/sh\ncase "$1" in --version) echo "9.9.9 (Claude Code)";; *) exec sleep 120;; esac\n',
    );
    chmodSync(fake, 0o755);
    const created = await world.api<Json>("POST", "/v1/sessions", {
      workDir: world.workDir,
      name: "unverified",
      reuse: false,
      env: { PATH: `${bin}:${world.env.PATH}` },
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ agentVersion: "9.9.9", verified: false });
    const warnings = world.ag
      .stderr()
      .split("\n")
      .filter((l) => l.includes("9.9.9 is not a verified version"));
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain("session unverified: claude 9.9.9 is not a verified version (verified: ");
    expect((await world.api("DELETE", `/v1/sessions/${created.body.id}`)).status).toBe(200);
  }, 30_000);

  test("kill closes the window; a second kill → 404", async () => {
    const killed = await world.api<Json>("DELETE", `/v1/sessions/${id}`);
    expect(killed.status).toBe(200);
    expect(killed.body.status).toBe("killed");
    const again = await world.api<Json>("DELETE", `/v1/sessions/${id}`);
    expect(again.status).toBe(404);
    expect(again.body.code).toBe("SESSION_NOT_FOUND");
    const pane = await world.api("GET", `/v1/sessions/${id}/pane`);
    expect(pane.status).toBe(404);
    // The conversation stays readable after the end. The agent writes its last lines as it exits
    // (a second or two after its window closed), so the latest reply shows up shortly after.
    const deadline = Date.now() + 8000;
    let output = "";
    while (!output.includes("Hello") && Date.now() < deadline) {
      output = (await world.api<Json>("GET", `/v1/sessions/${id}/read`)).body.output;
      if (!output.includes("Hello")) await Bun.sleep(250);
    }
    expect(output).toContain("Hello");
  }, 30_000);
});
