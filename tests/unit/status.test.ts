import { describe, expect, test } from "bun:test";
import type { Observation, ObservationSource } from "../../src/sessions/observation.ts";
import { CONFIRM_MS, initialStatus, reduce, type StatusState } from "../../src/sessions/status.ts";

/** Feeds observations at given times; returns the states and events seen. */
function run(start: StatusState, steps: Array<[at: number, source: ObservationSource, obs: Observation]>) {
  let state = start;
  const events: string[] = [];
  const statuses: string[] = [];
  for (const [at, source, obs] of steps) {
    const t = reduce(state, obs, source, at);
    state = t.state;
    events.push(...t.events);
    statuses.push(state.status);
  }
  return { state, events, statuses };
}

const STALL = 120_000;
const idleStart = () => initialStatus(0, STALL, "idle");
const bash = { kind: "tool" as const, tool: "Bash", detail: "ls -la" };

describe("hooks drive the state", () => {
  test("prompt → working → Stop → idle", () => {
    const r = run(idleStart(), [
      [10, "hook", { kind: "prompt-submitted", text: "say hello" }],
      [20, "hook", { kind: "turn-ended" }],
    ]);
    expect(r.statuses).toEqual(["working", "idle"]);
    expect(r.events).toEqual(["session.working", "status.working", "session.idle", "status.idle"]);
  });

  test("a permission request → permission_prompt with a pending id; the tool running → working", () => {
    const r = run(idleStart(), [
      [10, "hook", { kind: "prompt-submitted", text: "run ls" }],
      [20, "hook", { kind: "activity", working: true }],
      [30, "hook", { kind: "permission", request: bash }],
    ]);
    expect(r.state.status).toBe("permission_prompt");
    expect(r.state.pending).toEqual({ id: "perm-1", ...bash });
    expect(r.events).toContain("permission.requested");
    expect(r.events).toContain("status.permission");
    const after = run(r.state, [[40, "hook", { kind: "activity", working: true }]]);
    expect(after.state.status).toBe("working");
    expect(after.state.pending).toBeNull();
  });

  test("the same dialog seen again (hook, then screen) is one request, not two", () => {
    const r = run(idleStart(), [
      [10, "hook", { kind: "permission", request: bash }],
      [20, "screen", { kind: "permission", request: bash }],
    ]);
    expect(r.events.filter((e) => e === "permission.requested")).toHaveLength(1);
    expect(r.state.pending?.id).toBe("perm-1");
  });

  test("a question → asking; a plan → permission_prompt of kind plan", () => {
    const q = run(idleStart(), [
      [10, "hook", { kind: "permission", request: { kind: "question", detail: "Pick one" } }],
    ]);
    expect(q.state.status).toBe("asking");
    expect(q.events).toContain("status.question");
    const p = run(idleStart(), [
      [10, "hook", { kind: "permission", request: { kind: "plan", detail: "plan.md" } }],
    ]);
    expect(p.state.status).toBe("permission_prompt");
    expect(p.events).toContain("status.plan");
  });

  test("an API failure ends the turn with its event", () => {
    const r = run(idleStart(), [
      [10, "hook", { kind: "prompt-submitted", text: "x" }],
      [20, "hook", { kind: "turn-failed", error: "rate_limit", rateLimited: true }],
    ]);
    expect(r.state.status).toBe("idle");
    expect(r.events).toContain("status.rate_limited");
  });

  test("SessionEnd alone changes nothing; a clean exit → completed; a dead process → crashed; terminal states stay", () => {
    expect(run(idleStart(), [[5, "hook", { kind: "session-ended", reason: "other" }]]).state.status).toBe(
      "idle",
    );
    const dead = run(idleStart(), [[5, "tmux", { kind: "exited", status: 137 }]]);
    expect(dead.state.status).toBe("crashed");
    expect(dead.events).toEqual(["status.dead", "session.ended"]);
    expect(run(dead.state, [[6, "hook", { kind: "prompt-submitted", text: "x" }]]).state.status).toBe(
      "crashed",
    );
    expect(run(idleStart(), [[5, "tmux", { kind: "exited", status: 0 }]]).state.status).toBe("completed");
  });
});

describe("the screen never turns a working agent idle on one frame", () => {
  const working = () => run(idleStart(), [[0, "hook", { kind: "prompt-submitted", text: "x" }]]).state;

  test("an idle-looking frame right after the prompt is ignored", () => {
    const r = run(working(), [
      [50, "screen", { kind: "screen-idle", interrupted: false }],
      [100, "screen", { kind: "screen-working" }],
    ]);
    expect(r.statuses).toEqual(["working", "working"]);
  });

  test("an idle screen held for CONFIRM_MS with no hook since → idle (e.g. interrupted before any output)", () => {
    const r = run(working(), [
      [5000, "screen", { kind: "screen-idle", interrupted: false }],
      [5000 + CONFIRM_MS - 1, "timer", { kind: "tick" }],
      [5000 + CONFIRM_MS, "timer", { kind: "tick" }],
    ]);
    expect(r.statuses).toEqual(["working", "working", "idle"]);
  });

  test("a hook during the confirmation window restarts it", () => {
    const r = run(working(), [
      [5000, "screen", { kind: "screen-idle", interrupted: false }],
      [5500, "hook", { kind: "activity", working: true }],
      [5000 + CONFIRM_MS, "timer", { kind: "tick" }],
      [5500 + CONFIRM_MS, "timer", { kind: "tick" }],
    ]);
    expect(r.statuses).toEqual(["working", "working", "working", "idle"]);
  });

  test("the interrupt marker on screen is enough at once", () => {
    const r = run(working(), [[5000, "screen", { kind: "screen-idle", interrupted: true }]]);
    expect(r.state.status).toBe("idle");
  });

  test("the reduction asks to be rechecked when the confirmation is due", () => {
    const t = reduce(working(), { kind: "screen-idle", interrupted: false }, "screen", 5000);
    expect(t.recheckAt).toBe(5000 + CONFIRM_MS);
  });

  test("a rejected permission: the dialog closes to an idle prompt → idle after confirmation", () => {
    const asked = run(idleStart(), [[10, "hook", { kind: "permission", request: bash }]]).state;
    const r = run(asked, [
      [20, "screen", { kind: "screen-idle", interrupted: false }],
      [20 + CONFIRM_MS, "timer", { kind: "tick" }],
    ]);
    expect(r.statuses).toEqual(["permission_prompt", "idle"]);
    expect(r.state.pending).toBeNull();
  });

  test("an idle session whose screen works for CONFIRM_MS → working (a prompt typed by hand, hooks missing)", () => {
    const r = run(idleStart(), [
      [10, "screen", { kind: "screen-working" }],
      [10 + CONFIRM_MS, "screen", { kind: "screen-working" }],
    ]);
    expect(r.statuses).toEqual(["idle", "working"]);
  });
});

describe("stall", () => {
  test("no activity for the threshold while working → stalled; activity → recovered", () => {
    const start = run(idleStart(), [[0, "hook", { kind: "prompt-submitted", text: "hang forever" }]]).state;
    const r = run(start, [
      [60_000, "screen", { kind: "screen-working" }], // the spinner alone is not activity
      [STALL, "timer", { kind: "tick" }],
    ]);
    expect(r.state.status).toBe("stalled");
    expect(r.events).toEqual(["session.stalled", "status.stall"]);
    const back = run(r.state, [[STALL + 10, "screen", { kind: "activity", working: false }]]);
    expect(back.state.status).toBe("working");
    expect(back.events).toEqual(["status.recovered", "session.working", "status.working"]);
  });

  test("a spinner frame does not recover a stall", () => {
    const start = run(idleStart(), [[0, "hook", { kind: "prompt-submitted", text: "x" }]]).state;
    const stalled = run(start, [[STALL, "timer", { kind: "tick" }]]).state;
    expect(run(stalled, [[STALL + 5000, "screen", { kind: "screen-working" }]]).state.status).toBe("stalled");
  });

  test("idle sessions never stall; the next stall check is scheduled while working", () => {
    expect(run(idleStart(), [[STALL * 3, "timer", { kind: "tick" }]]).state.status).toBe("idle");
    const t = reduce(idleStart(), { kind: "prompt-submitted", text: "x" }, "hook", 100);
    expect(t.recheckAt).toBe(100 + STALL);
  });
});

describe("start-up", () => {
  test("a booting session becomes idle on its first idle screen, at once", () => {
    const booting = initialStatus(0, STALL, "working", true);
    const r = run(booting, [
      [100, "screen", { kind: "starting" }],
      [900, "screen", { kind: "screen-idle", interrupted: false }],
    ]);
    expect(r.statuses).toEqual(["working", "idle"]);
    expect(r.state.booting).toBe(false);
  });

  test("a trust dialog at start is a permission prompt of kind trust", () => {
    const booting = initialStatus(0, STALL, "working", true);
    const r = run(booting, [
      [500, "screen", { kind: "permission", request: { kind: "trust", detail: "/work" } }],
    ]);
    expect(r.state.status).toBe("permission_prompt");
    expect(r.state.pending?.kind).toBe("trust");
  });
});
