import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import type { AgentObservation } from "../../src/agents/agent.ts";
import { toObservation } from "../../src/agents/claude/adapter.ts";
import { readHook } from "../../src/agents/claude/hooks.ts";
import type { ScreenState } from "../../src/agents/claude/screen.ts";
import type { ObservationSource } from "../../src/drivers/observation.ts";
import { CONFIRM_MS, initialStatus, reduce, type StatusState } from "../../src/sessions/live/status.ts";

/**
 * A whole recorded run of the real CLI (tests/fixtures/agent, made by scripts/capture-fixtures.ts):
 * its hooks and every change of its screen, at the times they happened. The screen the agent
 * shows is a step function of time; what ag sees of it depends on when its captures run and how
 * long they take, which is what a busy machine changes. Each case below replays the run with
 * seeded random delays: hooks arrive late (in order), captures start at random moments, take up
 * to seconds, show some moment between their start and their end, and arrive after hooks that
 * are newer than what they show. The fusion's own requests (a fresh capture for a confirmation)
 * are honoured, its timers fire. The state must never contradict what the hooks said.
 */

interface Entry {
  t: number;
  source: "hook" | "screen";
  event?: string;
  screen?: ScreenState;
}

const dir = join(import.meta.dir, "..", "fixtures", "agent");
const lines = async (file: string) =>
  (await Bun.file(join(dir, file)).text())
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l));

async function recording() {
  const raw: Array<{ t: string; source: "hook" | "screen"; event?: string }> = await lines("timeline.jsonl");
  const payloads = new Map<string, Array<Record<string, unknown>>>();
  for (const { body } of await lines("hook-events.jsonl")) {
    const queue = payloads.get(body.hook_event_name) ?? [];
    queue.push(body);
    payloads.set(body.hook_event_name, queue);
  }
  const start = Date.parse(raw[0]!.t);
  const entries: Entry[] = raw.map((e) => ({
    t: Date.parse(e.t) - start,
    source: e.source,
    event: e.event,
    // Recorded before questions carried their options on screen.
    screen: e.source === "screen" ? ({ options: [], ...e } as unknown as ScreenState) : undefined,
  }));
  const hooks = entries
    .filter((e) => e.source === "hook")
    .map((e) => ({
      t: e.t,
      event: e.event!,
      obs: readHook(e.event!, payloads.get(e.event!)?.shift() ?? {}).observation,
    }));
  const frames = entries.filter((e) => e.source === "screen").map((e) => ({ t: e.t, screen: e.screen! }));
  return { hooks, frames, end: entries.at(-1)!.t };
}

type Recording = Awaited<ReturnType<typeof recording>>;

/** The screen the agent showed at `t`. */
function screenAt(rec: Recording, t: number): ScreenState {
  let shown: ScreenState = { state: "starting" };
  for (const frame of rec.frames) if (frame.t <= t) shown = frame.screen;
  return shown;
}

const isDialogScreen = (s: ScreenState) =>
  s.state === "permission" || s.state === "ask_question" || s.state === "plan_approval";

/**
 * What the agent was doing, from the recording: the spans of its turns (prompt hook to Stop, or to
 * the screen's end of it: an interrupt, a dialog refused by hand) and of its dialogs (permission
 * hook to the tool's end, or to the screen showing the dialog gone).
 */
function truth(rec: Recording) {
  const turns: Array<{ from: number; to: number }> = [];
  const dialogs: Array<{ from: number; to: number }> = [];
  const hookAt = (name: string, after: number) => rec.hooks.find((h) => h.event === name && h.t > after)?.t;
  for (const hook of rec.hooks) {
    if (hook.event === "PermissionRequest") {
      const shown = rec.frames.find((f) => f.t > hook.t && isDialogScreen(f.screen))!.t;
      const gone = rec.frames.find((f) => f.t > shown && !isDialogScreen(f.screen))?.t ?? rec.end;
      dialogs.push({ from: hook.t, to: Math.min(hookAt("PostToolUse", hook.t) ?? rec.end, gone) });
    }
    if (hook.event === "UserPromptSubmit") {
      const ended = Math.min(hookAt("Stop", hook.t) ?? rec.end, hookAt("StopFailure", hook.t) ?? rec.end);
      const byScreen = rec.frames.find(
        (f) =>
          f.t > hook.t &&
          f.screen.state === "idle" &&
          (f.screen.interrupted || dialogs.some((d) => d.from > hook.t && d.to === f.t)),
      )?.t;
      turns.push({ from: hook.t, to: Math.min(ended, byScreen ?? rec.end) });
    }
  }
  return { turns, dialogs };
}

/** A small seeded PRNG (mulberry32): the same seed, the same case. */
function prng(seed: number) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

interface Load {
  /** Hooks arrive up to this late (in order). */
  hookDelayMs: number;
  /** A capture takes up to this long; under load its tail is long. */
  captureMs: number;
  /** tmux's change notification (and so the capture's start) comes up to this late. */
  notifyMs: number;
}

interface Applied {
  at: number;
  arrival: number;
  source: ObservationSource;
  kind: string;
  status: string;
}

/** Replays the recording once with the delays a seed picks; returns every step and the events. */
function replay(rec: Recording, seed: number, load: Load) {
  const random = prng(seed);
  const pending: Array<{
    arrival: number;
    at: number;
    source: ObservationSource;
    obs: AgentObservation | { kind: "tick" };
  }> = [];
  // Hooks: each arrives late, and never before the one sent before it.
  let last = 0;
  for (const hook of rec.hooks) {
    last = Math.max(last, hook.t + random() * load.hookDelayMs);
    if (hook.obs) pending.push({ arrival: last, at: last, source: "hook", obs: hook.obs });
  }
  // Capture requests: each change of the screen (late), and the spinner's own redraws at random.
  const requests: number[] = [];
  for (const frame of rec.frames) requests.push(frame.t + random() * load.notifyMs);
  for (let t = 0; t < rec.end; t += 50 + random() * 600) requests.push(t);
  requests.sort((a, b) => a - b);

  let state: StatusState = initialStatus(0, 120_000, "working", { booting: true });
  const steps: Applied[] = [];
  const events: string[] = [];
  let captureBusyUntil = -1;
  let again = false;
  let recheckAt: number | null = null;
  const wantCapture = (t: number) => {
    requests.push(t);
    requests.sort((a, b) => a - b);
  };
  const startCapture = (c: number) => {
    const took = load.captureMs * random() ** 2; // mostly quick, sometimes slow
    const shownAt = c + random() * took; // some moment between its start and its end
    captureBusyUntil = c + took;
    pending.push({ arrival: c + took, at: c, source: "screen", obs: toObservation(screenAt(rec, shownAt)) });
  };

  for (let guard = 0; guard < 100_000; guard++) {
    const nextObs = pending.reduce((m, p) => Math.min(m, p.arrival), Number.POSITIVE_INFINITY);
    const nextReq = requests[0] ?? Number.POSITIVE_INFINITY;
    const nextTick = recheckAt ?? Number.POSITIVE_INFINITY;
    const now = Math.min(nextObs, nextReq, nextTick);
    if (now === Number.POSITIVE_INFINITY || now > rec.end + 10_000) break;
    if (now === nextReq) {
      requests.shift();
      // One capture at a time: a request during one runs once more after it.
      if (now < captureBusyUntil) again = true;
      else startCapture(now);
      continue;
    }
    let item:
      | (typeof pending)[number]
      | { arrival: number; at: number; source: ObservationSource; obs: { kind: "tick" } };
    if (now === nextObs) {
      const index = pending.findIndex((p) => p.arrival === now);
      item = pending.splice(index, 1)[0]!;
      if (item.source === "screen" && again) {
        again = false;
        startCapture(now);
      }
    } else {
      recheckAt = null;
      item = { arrival: now, at: now, source: "timer", obs: { kind: "tick" } };
    }
    const transition = reduce(state, item.obs, item.source, item.at);
    state = transition.state;
    events.push(...transition.events);
    recheckAt = transition.recheckAt;
    if (transition.rereadAt !== null) wantCapture(Math.max(now, transition.rereadAt));
    if (transition.catchUpAt !== null) wantCapture(Math.max(now, transition.catchUpAt));
    steps.push({
      at: item.at,
      arrival: item.arrival,
      source: item.source,
      kind: item.obs.kind,
      status: state.status,
    });
  }
  return { steps, events, state };
}

/** Every way a replay contradicted what the hooks said (empty when it did not). */
function misreads(rec: Recording, run: ReturnType<typeof replay>): string[] {
  const { turns, dialogs } = truth(rec);
  // The step at which each hook (by its recorded time) was applied: hooks keep their order.
  const hookTimes = rec.hooks.filter((h) => h.obs).map((h) => h.t);
  const hookSteps = run.steps.flatMap((s, i) => (s.source === "hook" ? [i] : []));
  const appliedAt = (t: number) => hookSteps[hookTimes.indexOf(t)] ?? Number.POSITIVE_INFINITY;
  const found: string[] = [];
  for (const [i, step] of run.steps.entries()) {
    for (const d of dialogs) {
      // Known from its hook, and not yet answered by the agent's own word: it must show.
      if (
        i >= appliedAt(d.from) &&
        step.arrival < d.to &&
        !["permission_prompt", "asking"].includes(step.status)
      )
        found.push(`${step.arrival.toFixed(0)} ms: ${step.status} while the dialog of ${d.from} ms waited`);
    }
    for (const turn of turns) {
      if (i >= appliedAt(turn.from) && step.arrival < turn.to && step.status === "idle")
        found.push(`${step.arrival.toFixed(0)} ms: idle during the turn of ${turn.from} ms`);
    }
  }
  const asked = run.events.filter((e) => e === "permission.requested").length;
  if (asked !== dialogs.length) found.push(`${asked} permission.requested for ${dialogs.length} dialogs`);
  if (run.state.status !== "completed") found.push(`ended ${run.state.status}, not completed`);
  return found;
}

describe("the recorded run, replayed under load", () => {
  const loads: Array<[string, Load]> = [
    ["an idle machine", { hookDelayMs: 20, captureMs: 30, notifyMs: 20 }],
    ["a busy machine", { hookDelayMs: 150, captureMs: 800, notifyMs: 300 }],
    ["a machine with every core saturated", { hookDelayMs: 400, captureMs: 2500, notifyMs: 1000 }],
  ];
  for (const [name, load] of loads) {
    test(`${name}: 1,000 seeded cases, no lost prompt, no idle turn, one request per dialog`, async () => {
      const rec = await recording();
      const failures: string[] = [];
      for (let seed = 1; seed <= 1000; seed++) {
        const run = replay(rec, seed, load);
        for (const miss of misreads(rec, run)) failures.push(`seed ${seed}: ${miss}`);
      }
      expect(failures).toEqual([]);
    });
  }

  test("the replay harness itself catches the old fusion's failure mode", async () => {
    // A sanity check of the checker: a state that forgets a dialog is reported.
    const rec = await recording();
    const run = replay(rec, 7, { hookDelayMs: 20, captureMs: 30, notifyMs: 20 });
    const broken = {
      ...run,
      steps: run.steps.map((s) => (s.status === "permission_prompt" ? { ...s, status: "working" } : s)),
    };
    expect(misreads(rec, broken).length).toBeGreaterThan(0);
    expect(misreads(rec, run)).toEqual([]);
  });

  test("the recorded run, in order and on time, ends where it should at every step", async () => {
    const rec = await recording();
    const run = replay(rec, 1, { hookDelayMs: 0, captureMs: 0, notifyMs: 0 });
    const byHook = (event: string) =>
      rec.hooks
        .map((h, i) => ({ h, i }))
        .filter(({ h }) => h.event === event && h.obs)
        .map(({ h }) => run.steps.find((s) => s.source === "hook" && s.at === h.t)?.status);
    expect(new Set(byHook("UserPromptSubmit"))).toEqual(new Set(["working"]));
    expect(new Set(byHook("Stop"))).toEqual(new Set(["idle"]));
    expect(new Set(byHook("PermissionRequest"))).toEqual(new Set(["permission_prompt", "asking"]));
    expect(run.events).toContain("status.rate_limited");
    // Eight prompts; the turn whose dialog was refused by hand had not been confirmed over by the
    // screen (CONFIRM_MS) when the next prompt came, so it ends with that one: seven ends.
    expect(run.events.filter((e) => e === "session.turn_ended").length).toBe(7);
    expect(run.events).not.toContain("session.stalled");
    expect(run.state.status).toBe("completed");
    expect(CONFIRM_MS).toBe(1500);
  });
});
