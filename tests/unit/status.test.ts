import { describe, expect, test } from "bun:test";
import type { PermissionRequest } from "../../src/agents/agent.ts";
import type { Observation, ObservationSource } from "../../src/drivers/observation.ts";
import {
  ANSWER_GRACE_MS,
  CATCH_UP_MS,
  CONFIRM_MS,
  initialStatus,
  reduce,
  type StatusState,
  type Transition,
} from "../../src/sessions/live/status.ts";

type Step = [at: number, source: ObservationSource, obs: Observation];

/** Feeds observations at given times; returns the states, events and the last transition. */
function run(start: StatusState, steps: Step[]) {
  let state = start;
  const events: string[] = [];
  const statuses: string[] = [];
  const meta: Array<Transition["meta"]> = [];
  let last: Transition | null = null;
  for (const [at, source, obs] of steps) {
    last = reduce(state, obs, source, at);
    state = last.state;
    events.push(...last.events);
    statuses.push(state.status);
    meta.push(last.meta);
  }
  return { state, events, statuses, meta, last: last! };
}

const STALL = 120_000;
const idleStart = () => initialStatus(0, STALL, "idle");
const bash: PermissionRequest = { kind: "tool", tool: "Bash", detail: "touch approved.txt" };
const prompt = (text = "x"): Observation => ({ kind: "prompt-submitted", text });
const spinner: Observation = { kind: "screen-working" };
const idleScreen: Observation = { kind: "screen-idle", interrupted: false };
const dialog = (request: PermissionRequest): Observation => ({ kind: "permission", request });
const working = (at = 0) => run(idleStart(), [[at, "hook", prompt()]]).state;
const caughtUp = (at = 0) => run(working(at), [[at + 10, "screen", spinner]]).state;

describe("hooks drive the state", () => {
  test("prompt → working → Stop → idle, and the turn's end is one fact", () => {
    const r = run(idleStart(), [
      [10, "hook", prompt("say hello")],
      [20, "hook", { kind: "turn-ended" }],
    ]);
    expect(r.statuses).toEqual(["working", "idle"]);
    expect(r.events).toEqual([
      "session.working",
      "status.working",
      "session.idle",
      "status.idle",
      "session.turn_ended",
    ]);
    expect(r.meta[1]!["session.turn_ended"]).toEqual({ reason: "completed" });
  });

  test("a permission request → permission_prompt with a pending id; its tool finishing → working", () => {
    const r = run(idleStart(), [
      [10, "hook", prompt("run ls")],
      [20, "hook", { kind: "tool", phase: "started", tool: "Bash", toolUseId: "t1" }],
      [30, "hook", dialog(bash)],
    ]);
    expect(r.state.status).toBe("permission_prompt");
    expect(r.state.pending).toEqual({ id: "perm-1", ...bash });
    expect(r.events).toContain("permission.requested");
    expect(r.events).toContain("status.permission");
    expect(r.last.detail).toBe("Bash: touch approved.txt");
    const after = run(r.state, [
      [40, "hook", { kind: "tool", phase: "finished", tool: "Bash", toolUseId: "t1" }],
    ]);
    expect(after.state.status).toBe("working");
    expect(after.state.pending).toBeNull();
  });

  test("another tool of the same batch finishing leaves the dialog of this one waiting", () => {
    const r = run(idleStart(), [
      [10, "hook", prompt()],
      [20, "hook", { kind: "tool", phase: "started", tool: "Read", toolUseId: "t0" }],
      [21, "hook", { kind: "tool", phase: "started", tool: "Bash", toolUseId: "t1" }],
      [30, "hook", dialog(bash)],
      [40, "hook", { kind: "tool", phase: "finished", tool: "Read", toolUseId: "t0" }],
    ]);
    expect(r.state.status).toBe("permission_prompt");
    expect(r.state.pending?.id).toBe("perm-1");
  });

  test("a question → asking, with its options; a plan → permission_prompt of kind plan", () => {
    const asked: PermissionRequest = {
      kind: "question",
      detail: "Which color?",
      question: "Which color?",
      options: [
        { index: 1, label: "Red" },
        { index: 2, label: "Blue" },
      ],
    };
    const q = run(idleStart(), [[10, "hook", dialog(asked)]]);
    expect(q.state.status).toBe("asking");
    expect(q.state.pending).toMatchObject({ id: "perm-1", options: asked.options });
    expect(q.events).toEqual(["permission.requested", "status.question"]);
    expect(q.last.detail).toBe("Which color? — 1. Red · 2. Blue");
    const p = run(idleStart(), [[10, "hook", dialog({ kind: "plan", detail: "plan.md" })]]);
    expect(p.state.status).toBe("permission_prompt");
    expect(p.events).toContain("status.plan");
  });

  test("an API failure ends the turn with one event; the error still on screen says nothing more", () => {
    const failed: Observation = { kind: "turn-failed", error: "rate_limit", rateLimited: true };
    const r = run(idleStart(), [
      [10, "hook", prompt()],
      [20, "hook", failed],
      ...Array.from({ length: 50 }, (_, i): Step => [30 + i * 10, "screen", { ...failed, error: "429" }]),
    ]);
    expect(r.state.status).toBe("idle");
    expect(r.events.filter((e) => e === "status.rate_limited")).toHaveLength(1);
    expect(r.events.filter((e) => e === "session.turn_ended")).toHaveLength(1);
  });

  test("the idle notification heals a lost Stop; the dialog reminder asks for a fresh look", () => {
    const healed = run(working(), [[60_000, "hook", { kind: "waiting-for-input" }]]);
    expect(healed.state.status).toBe("idle");
    expect(healed.events).toContain("session.turn_ended");
    const look = run(working(), [[500, "hook", { kind: "dialog-waiting" }]]);
    expect(look.last.rereadAt).toBe(500);
    expect(look.state.status).toBe("working");
  });

  test("a prompt line read from the transcript while a dialog waits is from before it", () => {
    const r = run(idleStart(), [
      [10, "hook", dialog(bash)],
      [20, "transcript", prompt("run cmd: touch approved.txt")],
    ]);
    expect(r.state.status).toBe("permission_prompt");
  });
});

describe("the end of a session", () => {
  test("SessionEnd alone changes nothing; a clean exit → completed; a dead process → crashed; terminal states stay", () => {
    expect(run(idleStart(), [[5, "hook", { kind: "session-ended", reason: "other" }]]).state.status).toBe(
      "idle",
    );
    const dead = run(idleStart(), [[5, "tmux", { kind: "exited", status: 137 }]]);
    expect(dead.state.status).toBe("crashed");
    expect(dead.events).toEqual(["status.dead", "session.ended"]);
    expect(dead.meta[0]!["session.ended"]).toEqual({ reason: "failed" });
    expect(run(dead.state, [[6, "hook", prompt()]]).state.status).toBe("crashed");
    const clean = run(idleStart(), [[5, "tmux", { kind: "exited", status: 0 }]]);
    expect(clean.state.status).toBe("completed");
    expect(clean.meta[0]!["session.ended"]).toEqual({ reason: "normal" });
  });

  test("ag's kill, its idle timeout and a failed launch are transitions with their events", () => {
    const killed = run(idleStart(), [
      [5, "ag", { kind: "closed", reason: "killed", detail: "session a killed" }],
    ]);
    expect(killed.state.status).toBe("killed");
    expect(killed.events).toEqual(["session.killed", "session.ended"]);
    expect(killed.meta[0]!["session.ended"]).toEqual({ reason: "killed" });
    expect(killed.last.endReason).toBe("killed");
    expect(killed.last.details).toEqual({ "session.ended": "killed" });
    // Its window closing afterwards is not a crash.
    expect(run(killed.state, [[6, "tmux", { kind: "gone" }]]).state.status).toBe("killed");

    const timedOut = run(idleStart(), [
      [5, "ag", { kind: "closed", reason: "idle_timeout", detail: "idle" }],
    ]);
    expect(timedOut.state.status).toBe("completed");
    expect(timedOut.events).toEqual(["status.stopped", "session.ended"]);
    expect(timedOut.meta[0]!["session.ended"]).toEqual({ reason: "idle_timeout" });

    const failed = run(initialStatus(0, STALL, "working", { booting: true }), [
      [5, "ag", { kind: "launch-failed", error: "no tmux" }],
    ]);
    expect(failed.state.status).toBe("crashed");
    expect(failed.events).toEqual(["status.dead", "session.ended"]);
    expect(failed.last.endReason).toBe("launch failed: no tmux");
  });

  test("a launch is told once; an ended session resumed is working again, booting", () => {
    const how = { permissionMode: "default", agentCommand: null };
    const launched = run(initialStatus(0, STALL, "working", { booting: true }), [
      [5, "ag", { kind: "launched", detail: "session a created", origin: { ...how, forkedFrom: "p" } }],
    ]);
    expect(launched.events).toEqual(["session.created"]);
    expect(launched.meta[0]!["session.created"]).toEqual({ ...how, forkedFrom: "p" });
    const ended = run(idleStart(), [[5, "ag", { kind: "closed", reason: "killed", detail: "" }]]).state;
    const resumed = run(ended, [
      [9, "ag", { kind: "launched", detail: "resumed", origin: { ...how, resumed: true } }],
    ]);
    expect(resumed.state.status).toBe("working");
    expect(resumed.state.booting).toBe(true);
    expect(resumed.events).toEqual(["session.created"]);
  });
});

describe("a late frame never overrules newer evidence", () => {
  test("a hook's permission outlives spinner frames drawn before its dialog, however long", () => {
    // The reported loss: the spinner is still drawn when the hook arrives (under load, for a while).
    const steps: Step[] = [
      [0, "hook", prompt("edit file")],
      [5, "screen", spinner],
      [100, "hook", dialog({ kind: "tool", tool: "Write", detail: "/w/hello.txt" })],
    ];
    for (let t = 110; t < 20_000; t += 250) steps.push([t, "screen", spinner]);
    const r = run(idleStart(), steps);
    expect(r.state.status).toBe("permission_prompt");
    expect(r.state.pending?.id).toBe("perm-1");
  });

  test("the dialog seen by the hook and then on screen is one request with the hook's detail", () => {
    const r = run(idleStart(), [
      [0, "hook", prompt("edit file")],
      [100, "hook", dialog({ kind: "tool", tool: "Write", detail: "/w/hello.txt" })],
      [160, "screen", dialog({ kind: "tool", tool: "Write", detail: "hello.txt" })],
    ]);
    expect(r.events.filter((e) => e === "permission.requested")).toHaveLength(1);
    expect(r.state.pending).toEqual({ id: "perm-1", kind: "tool", tool: "Write", detail: "/w/hello.txt" });
  });

  test("the screen shows a dialog before its tool's start arrives: that start answers nothing", () => {
    const question: PermissionRequest = {
      kind: "question",
      tool: "AskUserQuestion",
      detail: "Which color?",
      question: "Which color?",
    };
    const r = run(idleStart(), [
      [0, "hook", prompt("ask me")],
      [500, "screen", dialog(question)], // the hooks are late: the screen saw the dialog first
      [560, "hook", { kind: "tool", phase: "started", tool: "AskUserQuestion", toolUseId: "t1" }],
      [561, "hook", dialog(question)],
    ]);
    expect(r.statuses).toEqual(["working", "asking", "asking", "asking"]);
    expect(r.events.filter((e) => e === "permission.requested")).toHaveLength(1);
  });

  test("the screen first, the hook 60 ms later: still one request, named by the hook", () => {
    const r = run(idleStart(), [
      [0, "hook", prompt("run cmd")],
      [100, "screen", dialog({ kind: "tool", tool: "Bash", detail: "touch approved.txt" })],
      [160, "hook", dialog(bash)],
    ]);
    expect(r.events.filter((e) => e === "permission.requested")).toHaveLength(1);
    expect(r.state.pending?.id).toBe("perm-1");
  });

  test("a frame captured before the hook that set the state cannot change it", () => {
    const r = run(caughtUp(0), [
      [500, "hook", { kind: "turn-ended" }],
      [400, "screen", spinner],
      [400 + CONFIRM_MS + 10, "screen", { ...spinner }],
    ]);
    // The second frame is newer than the hook, but the screen has not shown idle since: ignored.
    expect(r.statuses).toEqual(["idle", "idle", "idle"]);
  });

  test("the dialog seen on screen, then gone for CONFIRM_MS in fresh frames → answered by hand", () => {
    const r = run(idleStart(), [
      [0, "hook", prompt()],
      [100, "hook", dialog(bash)],
      [150, "screen", dialog(bash)],
      [2000, "screen", spinner],
    ]);
    expect(r.state.status).toBe("permission_prompt");
    expect(r.last.rereadAt).toBe(2000 + CONFIRM_MS);
    const decided = run(r.state, [[2000 + CONFIRM_MS, "screen", spinner]]);
    expect(decided.state.status).toBe("working");
    expect(decided.state.pending).toBeNull();
  });

  test("time alone decides nothing: a tick at the confirmation time leaves the state as it was", () => {
    const r = run(idleStart(), [
      [0, "hook", prompt()],
      [100, "hook", dialog(bash)],
      [150, "screen", dialog(bash)],
      [2000, "screen", spinner],
      [2000 + CONFIRM_MS, "timer", { kind: "tick" }],
      [2000 + 10 * CONFIRM_MS, "timer", { kind: "tick" }],
    ]);
    expect(r.state.status).toBe("permission_prompt");
  });

  test("an idle-looking frame right after the prompt is ignored until the screen has shown the work", () => {
    const r = run(working(0), [
      [50, "screen", idleScreen],
      [50 + CONFIRM_MS, "screen", idleScreen],
      [3000, "screen", idleScreen],
    ]);
    expect(r.statuses).toEqual(["working", "working", "working"]);
    const after = run(r.state, [
      [3100, "screen", spinner],
      [5000, "screen", idleScreen],
      [5000 + CONFIRM_MS - 1, "screen", idleScreen],
      [5000 + CONFIRM_MS, "screen", idleScreen],
    ]);
    expect(after.statuses).toEqual(["working", "working", "working", "idle"]);
    expect(after.events).toContain("session.turn_ended");
  });

  test("a hook about the state during the confirmation window starts it over, and asks for a fresh look", () => {
    const r = run(caughtUp(0), [
      [5000, "screen", idleScreen],
      [5500, "hook", { kind: "tool", phase: "finished", tool: "Bash" }],
      [5000 + CONFIRM_MS, "screen", idleScreen], // the wait starts again here
      [5000 + 2 * CONFIRM_MS, "screen", idleScreen],
    ]);
    expect(r.statuses).toEqual(["working", "working", "working", "idle"]);
    const restarted = run(caughtUp(0), [
      [5000, "screen", idleScreen],
      [5500, "hook", { kind: "tool", phase: "finished", tool: "Bash" }],
    ]);
    expect(restarted.last.rereadAt).toBe(5500 + CONFIRM_MS);
    // A frame captured before that hook cannot start (or end) anything.
    expect(run(restarted.state, [[5400, "screen", idleScreen]]).state.disagreement).toBeNull();
  });

  test("a bare sign of life (a transcript line) does not stop the confirmation, nor cancel its fresh look", () => {
    const r = run(caughtUp(0), [
      [5000, "screen", idleScreen],
      [5500, "transcript", { kind: "activity" }],
    ]);
    expect(r.last.rereadAt).toBe(5000 + CONFIRM_MS);
    const decided = run(r.state, [[5000 + CONFIRM_MS, "screen", idleScreen]]);
    expect(decided.state.status).toBe("idle");
  });

  test("a dialog refused in the terminal, while its tool_result line is read, still ends", () => {
    // The rejection's transcript line arrives during the confirmation; the screen then sends nothing.
    const r = run(idleStart(), [
      [0, "hook", prompt()],
      [100, "hook", dialog(bash)],
      [150, "screen", dialog(bash)],
      [2000, "screen", idleScreen],
      [2200, "transcript", { kind: "activity" }],
    ]);
    expect(r.last.rereadAt).toBe(2000 + CONFIRM_MS);
    const decided = run(r.state, [[2000 + CONFIRM_MS, "screen", idleScreen]]);
    expect(decided.state.status).toBe("idle");
    expect(decided.meta[0]!["session.turn_ended"]).toEqual({ reason: "interrupted" });
  });

  test("a frame captured before ag's answer is not the next hook's dialog", () => {
    const next: PermissionRequest = { kind: "tool", tool: "Bash", detail: "rm x" };
    const r = run(idleStart(), [
      [0, "hook", prompt()],
      [100, "hook", dialog(bash)],
      [150, "screen", dialog(bash)],
      [1000, "ag", { kind: "keys", keys: "approve" }],
      [1050, "hook", dialog(next)],
      [990, "screen", dialog(bash)], // captured before the approve, applied after the new hook
      [1100, "screen", spinner], // the agent has not drawn the new dialog yet
      [2700, "screen", spinner],
    ]);
    expect(r.state.status).toBe("permission_prompt");
    expect(r.state.pending?.detail).toBe("rm x");
    expect(r.state.dialogSeen).toBe(false);
  });

  test("the idle notification ends a dialog the agent no longer shows", () => {
    const r = run(idleStart(), [
      [0, "hook", prompt()],
      [100, "hook", dialog(bash)],
      [60_100, "hook", { kind: "waiting-for-input" }],
    ]);
    expect(r.state.status).toBe("idle");
    expect(r.state.pending).toBeNull();
  });

  test("a state the screen has not shown gets a fresh look when the screen may judge it (CATCH_UP_MS)", () => {
    expect(reduce(idleStart(), prompt(), "hook", 100).catchUpAt).toBe(100 + CATCH_UP_MS);
    // Once the screen has shown it, no such look is due (nothing is captured at rest).
    expect(reduce(working(0), spinner, "screen", 10).catchUpAt).toBeNull();
  });

  test("a state the screen never showed for CATCH_UP_MS is judged by the screen (a lost hook)", () => {
    const r = run(working(0), [
      [100, "screen", idleScreen],
      [CATCH_UP_MS, "screen", idleScreen],
      [CATCH_UP_MS + CONFIRM_MS, "screen", idleScreen],
    ]);
    expect(r.statuses).toEqual(["working", "working", "idle"]);
  });

  test("an agent's start screen never ends the turn of the prompt it took (OpenCode, loaded)", () => {
    // Recorded (ag's log, one core busy): the prompt hook at 0; OpenCode kept its start screen,
    // box emptied, and began the turn 18 s later. The screen ended the turn at 11.55 s before.
    const home: Observation = { kind: "screen-idle", interrupted: false, home: true };
    const booted = run(initialStatus(0, STALL, "working", { booting: true }), [[-6_400, "screen", home]]);
    expect(booted.state.status).toBe("idle"); // the start screen is the UI up, ready
    const r = run(booted.state, [
      [0, "hook", prompt("say hello")],
      [200, "screen", home],
      [CATCH_UP_MS + 50, "screen", home],
      [CATCH_UP_MS + 50 + CONFIRM_MS, "screen", home],
      [11_550, "screen", home],
      [17_970, "screen", spinner],
      [26_300, "hook", { kind: "turn-ended" }],
    ]);
    expect(r.statuses).toEqual(["working", "working", "working", "working", "working", "working", "idle"]);
    expect(r.events.filter((e) => e === "session.turn_ended")).toHaveLength(1);
    // A lost end is still caught by a screen that shows the conversation (no `home`).
    const lost = run(working(0), [
      [CATCH_UP_MS, "screen", idleScreen],
      [CATCH_UP_MS + CONFIRM_MS, "screen", idleScreen],
    ]);
    expect(lost.state.status).toBe("idle");
  });

  test("the interrupt marker is enough at once, once the screen has caught up; a stale one is not", () => {
    const interrupted: Observation = { kind: "screen-idle", interrupted: true };
    expect(run(working(0), [[50, "screen", interrupted]]).state.status).toBe("working");
    const r = run(caughtUp(0), [[500, "screen", interrupted]]);
    expect(r.state.status).toBe("idle");
    expect(r.meta[0]!["session.turn_ended"]).toEqual({ reason: "interrupted" });
  });

  test("ag's interrupt lets the screen judge at once: the prompt back in the box → idle after confirmation", () => {
    const r = run(working(0), [
      [200, "ag", { kind: "keys", keys: "interrupt" }],
      [250, "screen", idleScreen],
      [250 + CONFIRM_MS, "screen", idleScreen],
    ]);
    expect(r.statuses).toEqual(["working", "working", "idle"]);
    expect(r.meta[2]!["session.turn_ended"]).toEqual({ reason: "interrupted" });
  });
});

describe("answers", () => {
  const waiting = () =>
    run(idleStart(), [
      [0, "hook", prompt()],
      [100, "hook", dialog(bash)],
      [150, "screen", dialog(bash)],
    ]).state;

  test("ag's approve → working; the dialog still drawn a moment later is not asked again", () => {
    const r = run(waiting(), [
      [1000, "ag", { kind: "keys", keys: "approve" }],
      [1020, "screen", dialog(bash)],
      [1100, "screen", dialog(bash)],
    ]);
    expect(r.statuses).toEqual(["working", "working", "working"]);
    expect(r.events.filter((e) => e === "permission.requested")).toHaveLength(0);
    expect(r.last.rereadAt).toBe(1000 + ANSWER_GRACE_MS);
  });

  test("a dialog still there ANSWER_GRACE_MS after the answer is waiting again, with its detail", () => {
    const r = run(waiting(), [
      [1000, "ag", { kind: "keys", keys: "approve" }],
      [1000 + ANSWER_GRACE_MS, "screen", dialog({ ...bash, detail: "touch" })],
    ]);
    expect(r.state.status).toBe("permission_prompt");
    expect(r.state.pending).toEqual({ id: "perm-2", ...bash });
  });

  test("once the screen has shown the dialog gone, the same dialog again is a new one", () => {
    const r = run(waiting(), [
      [1000, "ag", { kind: "keys", keys: "approve" }],
      [1100, "screen", spinner],
      [1300, "screen", dialog(bash)],
    ]);
    expect(r.state.status).toBe("permission_prompt");
    expect(r.state.pending?.id).toBe("perm-2");
  });

  test("keys for a dialog its tool's hook already closed tell nothing more: not an interrupt", () => {
    const started: Observation = { kind: "tool", tool: "Bash", phase: "started", toolUseId: "t1" };
    const r = run(waiting(), [
      [1000, "hook", started], // the agent took the Enter before ag said it pressed it
      [1001, "ag", { kind: "keys", keys: "approve", dialog: "perm-1" }],
    ]);
    expect(r.statuses).toEqual(["working", "working"]);
    expect(r.state.screenJudges).toBe(false);
    expect(r.state.interruptedByAg).toBe(false);
    expect(r.last.events).toEqual([]);
  });

  test("keys for a dialog the next one replaced leave the next one pending", () => {
    const next: PermissionRequest = { kind: "tool", tool: "Bash", detail: "rm x" };
    const r = run(waiting(), [
      [1000, "hook", { kind: "tool", tool: "Bash", phase: "finished", toolUseId: "t1" }],
      [1005, "hook", dialog(next)],
      [1010, "ag", { kind: "keys", keys: "answer", dialog: "perm-1" }],
    ]);
    expect(r.state.status).toBe("permission_prompt");
    expect(r.state.pending).toMatchObject({ id: "perm-2", detail: "rm x" });
  });

  test("a reject whose dialog is gone lands in the working turn: the screen judges, as for an interrupt", () => {
    const r = run(waiting(), [
      [1000, "hook", { kind: "tool", tool: "Bash", phase: "started", toolUseId: "t1" }],
      [1001, "ag", { kind: "keys", keys: "reject", dialog: "perm-1" }],
    ]);
    expect(r.state.status).toBe("working");
    expect(r.state.screenJudges).toBe(true);
  });

  test("ag's reject ends the turn at once (the agent sends no hook for it)", () => {
    const r = run(waiting(), [[1000, "ag", { kind: "keys", keys: "reject" }]]);
    expect(r.state.status).toBe("idle");
    expect(r.meta[0]!["session.turn_ended"]).toEqual({ reason: "interrupted" });
  });

  test("a dialog the status does not know brings the prompt back (a missed hook)", () => {
    const r = run(caughtUp(0), [
      [800, "screen", dialog({ kind: "tool", tool: "Write", detail: "hello.txt" })],
    ]);
    expect(r.state.status).toBe("permission_prompt");
    expect(r.state.pending).toEqual({ id: "perm-1", kind: "tool", tool: "Write", detail: "hello.txt" });
    expect(r.events).toContain("permission.requested");
  });

  test("a dialog of several questions: after ag answers the first, the second on screen is asked anew", () => {
    const first: PermissionRequest = { kind: "question", detail: "Which color?", question: "Which color?" };
    const second: PermissionRequest = { kind: "question", detail: "Which size?", question: "Which size?" };
    const r = run(idleStart(), [
      [0, "hook", prompt("ask two")],
      [100, "hook", dialog({ ...first, questions: 2 })],
      [150, "screen", dialog(first)],
      [1000, "ag", { kind: "keys", keys: "answer" }],
      [1010, "screen", dialog(first)], // not redrawn yet: the answered one, stale
      [1100, "screen", dialog(second)],
    ]);
    expect(r.statuses).toEqual(["working", "asking", "asking", "working", "working", "asking"]);
    expect(r.state.pending).toMatchObject({ id: "perm-2", question: "Which size?" });
  });

  test("one dialog replaced by another on screen (its answer unseen) → a second request", () => {
    const r = run(idleStart(), [
      [100, "screen", dialog(bash)],
      [400, "screen", dialog({ kind: "tool", tool: "Bash", detail: "rm -rf build" })],
    ]);
    expect(r.state.pending?.id).toBe("perm-2");
    expect(r.events.filter((e) => e === "permission.requested")).toHaveLength(2);
  });
});

describe("turns", () => {
  test("a new session's first idle ends its boot, at once, and is no turn", () => {
    const r = run(initialStatus(0, STALL, "working", { booting: true }), [[800, "screen", idleScreen]]);
    expect(r.state.status).toBe("idle");
    expect(r.events).not.toContain("session.turn_ended");
  });

  test("a prompt taken while the UI came up makes the first idle a turn end", () => {
    const r = run(initialStatus(0, STALL, "working", { booting: true }), [
      [500, "hook", prompt()],
      [900, "hook", { kind: "turn-ended" }],
    ]);
    expect(r.events.filter((e) => e === "session.turn_ended")).toHaveLength(1);
  });

  test("a session adopted after a restart is mid-turn: its next idle is a turn end", () => {
    for (const status of ["working", "stalled", "permission_prompt"] as const) {
      const r = run(initialStatus(0, STALL, status, { adopted: true }), [
        [10, "hook", { kind: "turn-ended" }],
      ]);
      expect(r.events).toContain("session.turn_ended");
    }
  });

  test("an adopted session's screen judges its stored state at once (nobody's evidence)", () => {
    const r = run(initialStatus(0, STALL, "working", { adopted: true }), [
      [10, "screen", idleScreen],
      [10 + CONFIRM_MS, "screen", idleScreen],
    ]);
    expect(r.statuses).toEqual(["working", "idle"]);
    // It finished while ag was away: completed, not cut short.
    expect(r.meta[1]!["session.turn_ended"]).toEqual({ reason: "completed" });
  });

  test("an adopted stalled session recovers on activity", () => {
    const r = run(initialStatus(0, STALL, "stalled", { adopted: true }), [
      [10, "hook", { kind: "activity" }],
    ]);
    expect(r.state.status).toBe("working");
    expect(r.events).toContain("status.recovered");
  });

  test("permission ids carry the run's tag: an id from before a restart never matches a new dialog", () => {
    const r = run(initialStatus(0, STALL, "idle", { idTag: "k7q2" }), [[10, "hook", dialog(bash)]]);
    expect(r.state.pending?.id).toBe("perm-1-k7q2");
  });
});

describe("stalls", () => {
  test("no activity for the threshold while working → stalled; activity → recovered", () => {
    const r = run(working(0), [[STALL, "timer", { kind: "tick" }]]);
    expect(r.state.status).toBe("stalled");
    expect(r.events).toEqual(["session.stalled", "status.stall"]);
    const back = run(r.state, [[STALL + 10, "screen", { kind: "activity" }]]);
    expect(back.state.status).toBe("working");
    expect(back.events).toEqual(["status.recovered", "session.working", "status.working"]);
  });

  test("a spinner frame does not recover a stall; idle sessions never stall", () => {
    const stalled = run(working(0), [[STALL, "timer", { kind: "tick" }]]).state;
    expect(run(stalled, [[STALL + 10, "screen", spinner]]).state.status).toBe("stalled");
    expect(run(idleStart(), [[STALL * 2, "timer", { kind: "tick" }]]).state.status).toBe("idle");
    expect(reduce(working(0), { kind: "tick" }, "timer", 10).recheckAt).toBe(STALL);
  });

  test("a Stop after a stall is a turn end", () => {
    const stalled = run(working(0), [[STALL, "timer", { kind: "tick" }]]).state;
    const r = run(stalled, [[STALL + 5, "hook", { kind: "turn-ended" }]]);
    expect(r.state.status).toBe("idle");
    expect(r.events).toContain("status.recovered");
    expect(r.events).toContain("session.turn_ended");
  });
});

test("a trust dialog at start is a permission prompt of kind trust", () => {
  const r = run(initialStatus(0, STALL, "working", { booting: true }), [
    [300, "screen", dialog({ kind: "trust", detail: "trust this folder?", dialog: "folder-trust" })],
  ]);
  expect(r.state.status).toBe("permission_prompt");
  expect(r.state.pending?.dialog).toBe("folder-trust");
});

test("a start-up dialog answered: a frame still showing it leaves the UI booting, the first idle frame is idle at once", () => {
  const trust = dialog({
    kind: "trust",
    detail: "use the API key found in the environment?",
    dialog: "api-key",
  });
  const r = run(initialStatus(0, STALL, "working", { booting: true }), [
    [300, "screen", trust],
    [900, "ag", { kind: "keys", keys: "approve", dialog: "perm-1" }],
    // Captured between the key and the agent's redraw: the dialog answered, still drawn.
    [950, "screen", trust],
    [1400, "screen", idleScreen],
  ]);
  expect(r.statuses).toEqual(["permission_prompt", "working", "working", "idle"]);
  // No look is asked for afterwards: the screen agreed.
  expect(r.last.catchUpAt).toBeNull();
});

test("a status the screen disagrees with is looked at once at the catch-up deadline, then confirmed, not re-read in a loop", () => {
  const start = working(0);
  const first = reduce(start, idleScreen, "screen", CATCH_UP_MS + 1);
  // The disagreement is being confirmed: its re-read is the one look asked for.
  expect(first.rereadAt).toBe(CATCH_UP_MS + 1 + CONFIRM_MS);
  expect(first.catchUpAt).toBeNull();
});
