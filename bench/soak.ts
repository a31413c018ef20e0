/**
 * Soak: many turns over a few REAL agent sessions (Claude Code against the project's mock model,
 * through the compiled binary) mixing every kind of turn, with the cores saturated, comparing
 * ag's state at every event it publishes with what the agent itself said and showed.
 *
 *   bun bench/soak.ts [path/to/ag] [turns=200] [sessions=4] [busyLoops=2]
 *
 * Ground truth comes from outside ag: the agent's own hooks, registered in its HOME's settings to
 * this script's listener (beside ag's per-session hooks), this script's own answers, and the
 * agent's screen captured when ag announces a state. Reported:
 * - misreads: state events whose status neither the hooks (within TOLERANCE_MS) nor the screen
 *   (captured on the event and a second later) support, per 1,000 transitions;
 * - lost prompts: dialogs the hooks announced that ag never announced;
 * - duplicate prompts: dialogs ag announced more than once;
 * - stuck turns, undelivered prompts.
 */
import { mkdirSync } from "node:fs";
import { join, resolve } from "node:path";
import { classifyScreen } from "../src/agents/claude/screen.ts";
import { parseSse } from "../tests/helpers/sse.ts";
import { claudeBenchWorld } from "./world.ts";

const binary = resolve(process.argv[2] ?? "dist/ag");
const TURNS = Number(process.argv[3] ?? 200);
const SESSIONS = Number(process.argv[4] ?? 4);
const BUSY = Number(process.argv[5] ?? 2);
/** How far apart ag's event and the hook that proves it may be (they travel separately). */
const TOLERANCE_MS = 1_500;
const TURN_TIMEOUT_MS = 180_000;

type Truth = "working" | "idle" | "dialog";
const STATE_EVENTS = new Set(["session.working", "session.idle", "permission.requested", "session.stalled"]);
// biome-ignore lint/suspicious/noExplicitAny: events are inspected field by field
type Json = Record<string, any>;

// ── The agent's own word: a hook listener of this script's ───────────────────────────────────
const hooks: Array<{ t: number; session: string; event: string; tool: string }> = [];
const listener = Bun.serve({
  port: 0,
  hostname: "127.0.0.1",
  async fetch(request) {
    const body = (await request.json()) as Json;
    hooks.push({
      t: Date.now(),
      session: String(body.session_id ?? ""),
      event: String(body.hook_event_name ?? ""),
      tool: String(body.tool_name ?? ""),
    });
    return Response.json({});
  },
});
const HOOK_EVENTS = [
  "UserPromptSubmit",
  "PreToolUse",
  "PostToolUse",
  "PostToolUseFailure",
  "PermissionRequest",
  "Stop",
  "StopFailure",
];
const toolish = new Set(["PreToolUse", "PostToolUse", "PostToolUseFailure", "PermissionRequest"]);
const hookSettings = Object.fromEntries(
  HOOK_EVENTS.map((event) => [
    event,
    [
      {
        ...(toolish.has(event) ? { matcher: "*" } : {}),
        hooks: [{ type: "http", url: `http://127.0.0.1:${listener.port}/${event}`, timeout: 5 }],
      },
    ],
  ]),
);

// ── A world: seeded HOME, the mock, the compiled ag ───────────────────────────────────────────
const world = await claudeBenchWorld("ag-soak", { settings: { hooks: hookSettings } });
const { root, socket, base } = world;
const agServer = world.startAg(binary);
const ag = agServer.proc;
await agServer.ready();

async function api(method: string, path: string, body?: unknown): Promise<{ status: number; body: Json }> {
  const response = await world.request(method, path, body);
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : {} };
}

// ── What ag said: every event, as it arrived ──────────────────────────────────────────────────
const agEvents: Array<Json & { at: number }> = [];
const waiters = new Set<() => void>();
const stream = new AbortController();
void (async () => {
  const response = await fetch(`${base}/v1/events`, { signal: stream.signal });
  const decoder = new TextDecoder();
  let rest = "";
  for await (const chunk of response.body!) {
    const parsed = parseSse(rest + decoder.decode(chunk, { stream: true }));
    rest = parsed.rest;
    for (const message of parsed.messages) {
      if (!message.data) continue;
      agEvents.push({ ...(message.data as Json), at: Date.now() });
      for (const wake of [...waiters]) wake();
    }
  }
})().catch(() => {});

/** The next event of `session` after index `from` that `match` accepts (null after the deadline). */
async function nextEvent(session: string, from: number, match: (e: Json) => boolean, until: number) {
  for (;;) {
    const found = agEvents.slice(from).find((e) => e.session?.id === session && match(e));
    if (found) return { event: found, index: agEvents.indexOf(found) };
    if (Date.now() > until) return null;
    await new Promise<void>((wake) => {
      const done = () => {
        waiters.delete(done);
        clearTimeout(timer);
        wake();
      };
      const timer = setTimeout(done, 500);
      waiters.add(done);
    });
  }
}

// ── The screen, when ag announces a state ─────────────────────────────────────────────────────
function screenView(paneId: string): Truth | null {
  const capture = Bun.spawnSync(["tmux", "-L", socket, "capture-pane", "-p", "-t", paneId]);
  if (capture.exitCode !== 0) return null;
  const state = classifyScreen(capture.stdout.toString()).state;
  if (state === "idle") return "idle";
  if (state === "working") return "working";
  if (state === "permission" || state === "ask_question" || state === "plan_approval") return "dialog";
  return null;
}
const screenChecks = new Map<Json, Array<Truth | null>>();

// ── Driving the sessions ──────────────────────────────────────────────────────────────────────
const random = (() => {
  let a = 0x9e3779b9;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
})();
const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
const PROMPTS = [
  "say hello",
  "run ls",
  "edit file",
  "change file",
  "ask me",
  "think",
  "run cmd: sleep 4",
] as const;
const PLAN_PROMPTS = ["make a plan", "make a plan", "say hello", "ask me", "think"] as const;
const outcome = {
  turns: 0,
  undelivered: 0,
  stuck: 0,
  answers: { approve: 0, reject: 0, option: 0, text: 0 },
};
/** This script's own answers: after one, the agent works (approve, answer) or waits (reject). */
const answered: Array<{ t: number; session: string; truth: Truth }> = [];
async function answer(session: string, path: string, body: unknown, truth: Truth): Promise<void> {
  const t = Date.now();
  await api("POST", `/v1/sessions/${session}/${path}`, body);
  answered.push({ t, session, truth });
}

async function runTurn(session: { id: string; paneId: string; plan: boolean }): Promise<void> {
  const from = agEvents.length;
  const prompt = pick(session.plan ? PLAN_PROMPTS : PROMPTS);
  const sent = await api("POST", `/v1/sessions/${session.id}/send`, { text: prompt });
  outcome.turns++;
  if (!sent.body.delivered) {
    outcome.undelivered++;
    return;
  }
  const deadline = Date.now() + TURN_TIMEOUT_MS;
  let cursor = from;
  for (;;) {
    const next = await nextEvent(
      session.id,
      cursor,
      (e) => e.event === "session.turn_ended" || e.event === "permission.requested",
      deadline,
    );
    if (!next) {
      outcome.stuck++;
      console.error(`stuck: ${session.id} on "${prompt}"`);
      await api("POST", `/v1/sessions/${session.id}/escape`);
      return;
    }
    cursor = next.index + 1;
    if (next.event.event === "session.turn_ended") return;
    const pending = next.event.meta.pendingPermission as Json;
    await Bun.sleep(200 + random() * 1_300); // a person reads the prompt
    if (pending.kind === "question") {
      if (random() < 0.7) {
        outcome.answers.option++;
        await answer(session.id, "answer", { option: 1 + Math.floor(random() * 2) }, "working");
      } else {
        outcome.answers.text++;
        await answer(session.id, "answer", { text: "teal" }, "working");
      }
    } else if (pending.kind === "plan" || random() < 0.2) {
      // A refused plan leaves the session in plan mode for the next one.
      outcome.answers.reject++;
      await answer(session.id, "reject", { permissionId: pending.id }, "idle");
    } else {
      outcome.answers.approve++;
      await answer(session.id, "approve", { permissionId: pending.id }, "working");
    }
  }
}

const busy = Array.from({ length: BUSY }, () =>
  Bun.spawn([process.execPath, "-e", "const end = Date.now() + 3_600_000; while (Date.now() < end) {}"]),
);
const started = Date.now();
let sessions: Array<{ id: string; paneId: string; plan: boolean }> = [];
try {
  sessions = await Promise.all(
    Array.from({ length: SESSIONS }, async (_, i) => {
      const workDir = join(root, `work-${i}`);
      mkdirSync(workDir);
      const plan = i === SESSIONS - 1;
      const created = await api("POST", "/v1/sessions", {
        workDir,
        ...(plan ? { permissionMode: "plan" } : {}),
      });
      for (
        let n = 0;
        n < 300 && (await api("GET", `/v1/sessions/${created.body.id}`)).body.status !== "idle";
        n++
      )
        await Bun.sleep(100);
      const record = (await api("GET", `/v1/sessions/${created.body.id}/health`)).body;
      return { id: created.body.id as string, paneId: record.pane.paneId as string, plan };
    }),
  );
  // Check ag's state events against the screen as they come.
  let checked = 0;
  const checker = setInterval(() => {
    for (; checked < agEvents.length; checked++) {
      const event = agEvents[checked]!;
      if (!STATE_EVENTS.has(event.event)) continue;
      const session = sessions.find((s) => s.id === event.session?.id);
      if (!session) continue;
      const views: Array<Truth | null> = [screenView(session.paneId)];
      screenChecks.set(event, views);
      setTimeout(() => views.push(screenView(session.paneId)), 1_000);
    }
  }, 20);
  const perSession = Math.ceil(TURNS / SESSIONS);
  await Promise.all(
    sessions.map(async (session) => {
      for (let i = 0; i < perSession && outcome.turns < TURNS; i++) await runTurn(session);
    }),
  );
  await Bun.sleep(1_500);
  clearInterval(checker);
} finally {
  for (const proc of busy) proc.kill("SIGKILL");
}
const elapsed = Date.now() - started;

// ── Judging ───────────────────────────────────────────────────────────────────────────────────
function statusOf(event: Json): Truth | "stalled" {
  if (event.event === "permission.requested") return "dialog";
  if (event.event === "session.idle") return "idle";
  if (event.event === "session.stalled") return "stalled";
  return "working";
}

/**
 * What the agent's hooks and this script's answers said the session was doing at `t` (a refused
 * dialog ends the turn with no hook at all: the script's own reject says so).
 */
function truthAt(session: string, t: number): Truth {
  const facts: Array<{ t: number; truth: Truth }> = [
    ...answered.filter((a) => a.session === session),
    ...hooks
      .filter((h) => h.session === session)
      .map((h) => ({
        t: h.t,
        truth: (h.event === "PermissionRequest"
          ? "dialog"
          : h.event === "Stop" || h.event === "StopFailure"
            ? "idle"
            : "working") as Truth,
      })),
  ].sort((a, b) => a.t - b.t);
  let truth: Truth = "idle";
  for (const fact of facts) if (fact.t <= t) truth = fact.truth;
  return truth;
}

/** Every state the truth took between `from` and `to` (ag's copy of a hook may come first). */
function truthsWithin(session: string, from: number, to: number): Truth[] {
  const times = [
    from,
    ...hooks.filter((h) => h.session === session && h.t > from && h.t <= to).map((h) => h.t),
    ...answered.filter((a) => a.session === session && a.t > from && a.t <= to).map((a) => a.t),
  ];
  return times.map((t) => truthAt(session, t));
}

const transitions = agEvents.filter(
  (e) => STATE_EVENTS.has(e.event) && sessions.some((s) => s.id === e.session?.id),
);
const misreads: string[] = [];
for (const event of transitions) {
  const said = statusOf(event);
  if (said === "stalled") continue; // a stall is a working agent gone quiet: not in the hooks
  const byHooks = truthsWithin(
    event.session.id,
    event.at - TOLERANCE_MS,
    event.at + TOLERANCE_MS / 3,
  ).includes(said);
  const byScreen = (screenChecks.get(event) ?? []).includes(said);
  if (!byHooks && !byScreen && process.env.SOAK_DEBUG) {
    const near = (t: number) => t > event.at - 6_000 && t < event.at + 2_000;
    const lines = [
      ...hooks
        .filter((h) => h.session === event.session.id && near(h.t))
        .map((h) => ({ t: h.t, what: `hook ${h.event} ${h.tool}` })),
      ...answered
        .filter((a) => a.session === event.session.id && near(a.t))
        .map((a) => ({ t: a.t, what: `answer → ${a.truth}` })),
      ...agEvents
        .filter((e) => e.session?.id === event.session.id && near(e.at) && !e.event.startsWith("message."))
        .map((e) => ({ t: e.at, what: `ag ${e.event} (${e.meta.source ?? ""}) ${e.detail}`.slice(0, 110) })),
    ].sort((a, b) => a.t - b.t);
    console.log(`--- around ${event.event} at ${event.at}`);
    for (const l of lines) console.log(`  ${l.t - event.at}ms ${l.what}`);
  }
  if (!byHooks && !byScreen)
    misreads.push(
      `${new Date(event.at).toISOString()} ${event.session.id.slice(0, 8)} ${event.event}: hooks ${truthAt(event.session.id, event.at)}, screen ${screenChecks.get(event)?.join("/")}`,
    );
}
/** The hook's tool and ag's pending permission are about the same dialog. */
function sameDialog(tool: string, pending: Json | null): boolean {
  if (!pending) return false;
  if (tool === "AskUserQuestion") return pending.kind === "question";
  if (tool === "ExitPlanMode") return pending.kind === "plan";
  return pending.kind === "tool" && pending.tool === tool;
}

// Every dialog the hooks announced must have been announced by ag, once: each of ag's
// announcements is paired with the nearest dialog of its kind the hooks announced.
let lost = 0;
let duplicated = 0;
let unmatched = 0;
const problems: string[] = [];
for (const session of sessions) {
  const requests = hooks.filter((h) => h.session === session.id && h.event === "PermissionRequest");
  const paired = new Map<(typeof requests)[number], Json[]>(requests.map((r) => [r, []]));
  for (const event of agEvents.filter(
    (e) => e.session?.id === session.id && e.event === "permission.requested",
  )) {
    const candidates = requests.filter(
      (r) => sameDialog(r.tool, event.meta.pendingPermission) && Math.abs(r.t - event.at) <= TOLERANCE_MS,
    );
    const nearest = candidates.sort((a, b) => Math.abs(a.t - event.at) - Math.abs(b.t - event.at))[0];
    if (nearest) paired.get(nearest)!.push(event);
    else {
      unmatched++;
      problems.push(
        `unmatched: ${session.id.slice(0, 8)} ${event.meta.pendingPermission?.kind} "${event.meta.pendingPermission?.detail}" via ${event.meta.source}`,
      );
    }
  }
  for (const [request, mine] of paired) {
    if (mine.length === 0) {
      lost++;
      problems.push(
        `lost: ${session.id.slice(0, 8)} ${request.tool} at ${new Date(request.t).toISOString()}`,
      );
    }
    if (mine.length > 1) {
      duplicated += mine.length - 1;
      const what = mine.map((e) => `${e.meta.pendingPermission?.id} via ${e.meta.source}`);
      problems.push(
        `duplicate: ${session.id.slice(0, 8)} ${request.tool} at ${new Date(request.t).toISOString()}: ${what.join(" | ")}`,
      );
    }
  }
}

const report = {
  command: `bun bench/soak.ts ${process.argv.slice(2).join(" ")}`.trim(),
  turns: outcome.turns,
  sessions: SESSIONS,
  busyLoops: BUSY,
  elapsedS: Math.round(elapsed / 1000),
  transitions: transitions.length,
  hookDialogs: hooks.filter(
    (h) => h.event === "PermissionRequest" && sessions.some((s) => s.id === h.session),
  ).length,
  misreads: misreads.length,
  misreadsPer1000: Number(((misreads.length / Math.max(1, transitions.length)) * 1000).toFixed(2)),
  lostPrompts: lost,
  duplicatePrompts: duplicated,
  promptsWithoutHook: unmatched,
  stuckTurns: outcome.stuck,
  undelivered: outcome.undelivered,
  answers: outcome.answers,
};
console.log(JSON.stringify(report, null, 2));
for (const line of misreads.slice(0, 20)) console.log(`misread: ${line}`);
for (const line of problems.slice(0, 20)) console.log(line);

stream.abort();
listener.stop(true);
await world.dispose(ag);
process.exit(misreads.length || lost || duplicated || unmatched || outcome.stuck ? 1 : 0);
