import { describe, expect, test } from "bun:test";
import { hintsFor } from "../../src/sessions/insight.ts";
import { testApp } from "../helpers/app.ts";
import { hook, simulateAgents } from "../helpers/simulated-agent.ts";
import { tempDir } from "../helpers/temp.ts";

// biome-ignore lint/suspicious/noExplicitAny: response bodies are inspected field by field
type Json = Record<string, any>;

describe("actionable hints", () => {
  const id = "s1";
  test.each([
    ["permission_prompt", "POST /v1/sessions/s1/approve or POST /v1/sessions/s1/reject"],
    ["asking", "POST /v1/sessions/s1/send"],
    ["stalled", "POST /v1/sessions/s1/interrupt"],
    ["idle", "POST /v1/sessions/s1/send"],
    ["working", "GET /v1/sessions/s1/read"],
    ["crashed", "POST /v1/sessions/s1/resume"],
    ["killed", "POST /v1/sessions/s1/resume"],
  ] as const)("%s → %s", (status, route) => {
    expect(hintsFor({ id, status, pendingPermission: null }, 5000).join(" ")).toContain(route);
  });

  test("a pending permission is named in its hint", () => {
    const [hint] = hintsFor(
      {
        id,
        status: "permission_prompt",
        pendingPermission: { id: "perm-1", kind: "tool", tool: "Bash", detail: "make test" },
      },
      0,
    );
    expect(hint).toBe(
      "waiting for permission (Bash: make test): POST /v1/sessions/s1/approve or POST /v1/sessions/s1/reject",
    );
  });
});

describe("per-session health, metrics and latency", () => {
  test("health: alive in its pane with the agent's pid, idle time, and the hint", async () => {
    const app = testApp();
    simulateAgents(app);
    const created = (await (
      await app.request("POST", "/v1/sessions", { body: { workDir: tempDir(), prompt: "hi" } })
    ).json()) as Json;
    await hook(app, created.id, "PermissionRequest", { tool_name: "Bash", tool_input: { command: "ls" } });
    const health = (await (await app.request("GET", `/v1/sessions/${created.id}/health`)).json()) as Json;
    expect(health).toMatchObject({ id: created.id, status: "permission_prompt", alive: true });
    expect(health.pane.paneId).toBe(app.repo.get(created.id)!.paneId);
    expect(health.hints[0]).toContain("/approve");
    app.tmux.exit(health.pane.paneId, 1);
    await Bun.sleep(30);
    const dead = (await (await app.request("GET", `/v1/sessions/${created.id}/health`)).json()) as Json;
    expect(dead).toMatchObject({ status: "crashed", alive: false, agentPid: null });
  });

  test("metrics count deliveries and time per state; latency reports delivery samples", async () => {
    const app = testApp();
    simulateAgents(app);
    const created = (await (
      await app.request("POST", "/v1/sessions", { body: { workDir: tempDir(), prompt: "one" } })
    ).json()) as Json;
    await app.request("POST", `/v1/sessions/${created.id}/send`, { body: { text: "two" } });
    const metrics = (await (await app.request("GET", `/v1/sessions/${created.id}/metrics`)).json()) as Json;
    expect(metrics.deliveries).toEqual({ sent: 2, delivered: 2, failed: 0, attempts: 2 });
    expect(Object.keys(metrics.timeInStateMs)).toContain("working");
    const latency = (await (await app.request("GET", `/v1/sessions/${created.id}/latency`)).json()) as Json;
    expect(latency.deliveryMs.count).toBe(2);
    expect(latency.deliveryMs.p50).toBeGreaterThanOrEqual(0);
    expect(latency.stateDetectionMs.count).toBeGreaterThan(0);
    const summary = (await (await app.request("GET", `/v1/sessions/${created.id}/summary`)).json()) as Json;
    expect(summary).toMatchObject({ id: created.id, turns: 0, filesTouched: [] }); // no transcript in the fake
    expect((await app.request("GET", "/v1/sessions/nope/metrics")).status).toBe(404);
  });
});
