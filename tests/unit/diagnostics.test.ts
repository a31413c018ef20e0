import { describe, expect, test } from "bun:test";
import { createDiagnostics, maskPaths } from "../../src/diagnostics/index.ts";
import { createEventBus } from "../../src/events/bus.ts";
import { testApp } from "../helpers/app.ts";
import { sampleInput } from "../helpers/events.ts";
import { hook, simulateAgents } from "../helpers/simulated-agent.ts";
import { tempDir } from "../helpers/temp.ts";

// biome-ignore lint/suspicious/noExplicitAny: response bodies are inspected field by field
type Json = Record<string, any>;

describe("the diagnostics ring", () => {
  test("bounded: the oldest events are evicted; newest first; limit", () => {
    const diagnostics = createDiagnostics({ size: 3, now: () => Date.UTC(2026, 0, 1) });
    for (let i = 1; i <= 5; i++) diagnostics.record("delivery.retry", `n${i}`);
    expect(diagnostics.list().events.map((e) => e.detail)).toEqual(["n5", "n4", "n3"]);
    expect(diagnostics.list(2)).toEqual({
      count: 2,
      events: [
        { type: "delivery.retry", timestamp: "2026-01-01T00:00:00.000Z", detail: "n5" },
        { type: "delivery.retry", timestamp: "2026-01-01T00:00:00.000Z", detail: "n4" },
      ],
    });
  });

  test("paths are masked in every detail", () => {
    expect(maskPaths("could not open a window: no such file /home/me/project/x.ts")).toBe(
      "could not open a window: no such file <path>",
    );
    expect(maskPaths('error "/tmp/tmux-0/svc" (server exited)')).toBe('error "<path>" (server exited)');
    expect(maskPaths("cwd=~/work/app:fail")).toBe("cwd=<path>:fail");
    expect(maskPaths("working → idle (hook)")).toBe("working → idle (hook)");
  });

  test("state changes come from the bus, once per transition, without content", () => {
    const bus = createEventBus();
    const diagnostics = createDiagnostics();
    diagnostics.follow(bus);
    const session = { id: "s1", name: "n", workDir: "/secret/dir" };
    const transition = { previous: "working", status: "idle", source: "hook" } as const;
    const reply = { session, detail: "the agent's reply text", meta: transition };
    bus.publish(sampleInput("session.idle", reply));
    bus.publish(sampleInput("status.idle", reply));
    bus.publish(sampleInput("message.assistant", { session, detail: "hello" }));
    bus.publish(
      sampleInput("session.working", {
        session,
        detail: "x",
        meta: { previous: "idle", status: "working", source: "screen" },
      }),
    );
    bus.publish(sampleInput("session.idle", { session, detail: "x", meta: transition }));
    const details = diagnostics.list().events.map((e) => `${e.type}: ${e.detail}`);
    expect(details).toEqual([
      "state.change: session s1: working → idle (hook)",
      "state.change: session s1: idle → working (screen)",
      "state.change: session s1: working → idle (hook)",
    ]);
    expect(JSON.stringify(diagnostics.list())).not.toMatch(/reply text|hello|secret/);
  });
});

describe("GET /v1/diagnostics", () => {
  test("a rejected hook, a failed delivery and state changes are listed; limit is validated", async () => {
    const app = testApp();
    const sim = simulateAgents(app, { hook: false });
    const created = await app.request("POST", "/v1/sessions", {
      body: { workDir: tempDir(), prompt: "secret prompt" },
    });
    const { id } = (await created.json()) as Json;
    expect(sim.enters()).toBeGreaterThan(0);
    await hook(app, id, "Stop", {}, "wrong-secret");
    const all = (await (await app.request("GET", "/v1/diagnostics")).json()) as Json;
    const types = all.events.map((e: Json) => e.type);
    expect(types).toContain("hook.rejected");
    expect(types).toContain("delivery.failed");
    expect(types).toContain("state.change");
    expect(all.count).toBe(all.events.length);
    expect(JSON.stringify(all)).not.toContain("secret prompt");
    expect(JSON.stringify(all)).not.toContain(app.repo.get(id)!.workDir);

    const one = (await (await app.request("GET", "/v1/diagnostics?limit=1")).json()) as Json;
    expect(one).toEqual({ count: 1, events: [all.events[0]] });
    // CONTRACT §8: 1–500; -1, 0 and 100000 once answered every event (issue 15).
    for (const limit of ["0", "-1", "501", "100000", "1.5", "1e309", "x"]) {
      const bad = await app.request("GET", `/v1/diagnostics?limit=${limit}`);
      expect(bad.status).toBe(400);
    }
  });
});

test("event ids can start anywhere (the server starts from its start time, so they grow across restarts)", () => {
  const bus = createEventBus({ firstId: 1_795_000_000_000_000 });
  expect(bus.publish(sampleInput("session.created")).id).toBe(1_795_000_000_000_000);
  expect(bus.publish(sampleInput("session.created")).id).toBe(1_795_000_000_000_001);
  expect(bus.since(1_795_000_000_000_000).map((e) => e.id)).toEqual([1_795_000_000_000_001]);
});
