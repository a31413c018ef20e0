import { expect, test } from "bun:test";
import { join } from "node:path";
import { toObservation } from "../../src/agents/claude/adapter.ts";
import { readHookPayload } from "../../src/agents/claude/hooks.ts";
import type { ScreenState } from "../../src/agents/claude/screen.ts";
import { CONFIRM_MS, initialStatus, reduce, type StatusState } from "../../src/sessions/status.ts";

/**
 * A whole recorded run of the real CLI (tests/fixtures/agent, made by scripts/capture-fixtures.ts):
 * hook arrivals and screen readings in the order and at the times they happened, replayed through
 * the adapter and the fusion. Timers fire where they would have.
 */
interface Entry {
  t: string;
  source: "hook" | "screen";
  event?: string;
  state?: string;
}

const dir = join(import.meta.dir, "..", "fixtures", "agent");
const lines = async (file: string) =>
  (await Bun.file(join(dir, file)).text())
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l));

test("the recorded run replays to the right state at every step", async () => {
  const timeline: Entry[] = await lines("timeline.jsonl");
  const payloads = new Map<string, Array<Record<string, unknown>>>();
  for (const { body } of await lines("hook-events.jsonl")) {
    const queue = payloads.get(body.hook_event_name) ?? [];
    queue.push(body);
    payloads.set(body.hook_event_name, queue);
  }
  const start = Date.parse(timeline[0]!.t);
  let state: StatusState = initialStatus(0, 120_000, "working", true);
  let recheckAt: number | null = null;
  const events: string[] = [];
  const trace: Array<{ step: string; status: string }> = [];

  for (const entry of timeline) {
    const now = Date.parse(entry.t) - start;
    if (recheckAt !== null && recheckAt <= now) {
      const t = reduce(state, { kind: "tick" }, "timer", recheckAt);
      state = t.state;
      events.push(...t.events);
      recheckAt = t.recheckAt;
    }
    const observation =
      entry.source === "hook"
        ? readHookPayload(entry.event!, payloads.get(entry.event!)?.shift() ?? {})
        : toObservation(entry as unknown as ScreenState);
    if (!observation) continue;
    const t = reduce(state, observation, entry.source, now);
    state = t.state;
    events.push(...t.events);
    recheckAt = t.recheckAt;
    trace.push({
      step: entry.source === "hook" ? entry.event! : `screen:${entry.state}`,
      status: state.status,
    });
  }

  const after = (step: string) => trace.filter((s) => s.step === step).map((s) => s.status);
  expect(trace[1]).toEqual({ step: "screen:idle", status: "idle" }); // booted
  expect(new Set(after("UserPromptSubmit"))).toEqual(new Set(["working"]));
  expect(new Set(after("Stop"))).toEqual(new Set(["idle"]));
  expect(new Set(after("PermissionRequest"))).toEqual(new Set(["permission_prompt", "asking"]));
  expect(new Set(after("PostToolUse"))).toEqual(new Set(["working"]));
  expect(after("StopFailure")).toEqual(["idle"]);
  expect(trace.at(-1)).toEqual({ step: "screen:exited", status: "completed" });
  expect(events).toContain("status.rate_limited");

  // A stale "working" frame right after Stop (the screen lags the hook) changes nothing.
  for (let i = 0; i + 1 < trace.length; i++) {
    if (trace[i]!.step === "Stop" && trace[i + 1]!.step === "screen:working")
      expect(trace[i + 1]!.status).toBe("idle");
  }
  // The interrupt (no hook at all) ends in idle from the screen's marker.
  const interrupted = trace.findIndex(
    (s, i) => s.step === "screen:idle" && trace[i - 1]?.step === "screen:working" && s.status === "idle",
  );
  expect(interrupted).toBeGreaterThan(0);
  // Nothing in the run looked stalled.
  expect(events).not.toContain("session.stalled");
  expect(CONFIRM_MS).toBe(1500);
});
