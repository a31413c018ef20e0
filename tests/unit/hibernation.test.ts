import { describe, expect, test } from "bun:test";
import { copyFileSync } from "node:fs";
import { join } from "node:path";
import { type HibernationView, hibernatesAt, keptAwake } from "../../src/sessions/hibernation/rules.ts";
import type { AdmissionHold } from "../../src/sessions/index.ts";
import { createManualClock, type ManualClock } from "../fakes/clock.ts";
import { type TestApp, testApp } from "../helpers/app.ts";
import { hook, simulateAgents } from "../helpers/simulated-agent.ts";
import { tempDir } from "../helpers/temp.ts";
import { until } from "../helpers/until.ts";

const AFTER = 60_000;

describe("the rules (pure)", () => {
  const view = (over: Partial<HibernationView> = {}): HibernationView => ({
    status: "idle",
    pending: null,
    ownAfterMs: null,
    serverAfterMs: AFTER,
    viewers: 0,
    resumable: true,
    ...over,
  });

  test("an idle session hibernates its own time, else the server's, after its last activity", () => {
    expect(hibernatesAt(view(), 1_000)).toBe(1_000 + AFTER);
    expect(hibernatesAt(view({ ownAfterMs: 5_000 }), 1_000)).toBe(6_000);
    expect(hibernatesAt(view({ serverAfterMs: 0, ownAfterMs: 5_000 }), 1_000)).toBe(6_000);
  });

  test("what keeps it up, each on its own", () => {
    expect(keptAwake(view())).toBeNull();
    expect(keptAwake(view({ serverAfterMs: 0 }))).toBe("off");
    expect(keptAwake(view({ ownAfterMs: 0 }))).toBe("pinned");
    expect(keptAwake(view({ status: "working" }))).toBe("not-idle");
    expect(keptAwake(view({ status: "stalled" }))).toBe("not-idle");
    const pending = { id: "perm-1", kind: "tool" as const, detail: "Bash" };
    expect(keptAwake(view({ status: "permission_prompt", pending }))).toBe("pending");
    expect(keptAwake(view({ viewers: 1 }))).toBe("watched");
    expect(keptAwake(view({ resumable: false }))).toBe("cannot-resume");
    expect(keptAwake(view({ status: undefined }))).toBe("not-followed");
    expect(hibernatesAt(view({ viewers: 2 }), 1_000)).toBeNull();
  });
});

/**
 * Sessions on the fake tmux, played by the simulated agent, whose timers run on a manual clock:
 * each has a conversation on disk (a transcript captured from the real CLI, read as history).
 */
async function world(
  options: { idleTimeoutMs?: number; admission?: (agent: string) => Promise<AdmissionHold> } = {},
) {
  const clock = createManualClock();
  const app = testApp({ clock, hibernateAfterMs: AFTER, ...options });
  simulateAgents(app);
  const names = () => app.events.map((e) => e.event);
  async function idleSession(body: Record<string, unknown> = {}, conversation = true): Promise<string> {
    const created = await app.request("POST", "/v1/sessions", { body: { workDir: tempDir(), ...body } });
    const id = (await created.json()).id as string;
    await until(() => app.repo.get(id)?.status === "idle");
    if (!conversation) return id;
    const transcript = join(tempDir(), "conversation.jsonl");
    copyFileSync(join(import.meta.dir, "..", "fixtures", "transcripts", "sample.jsonl"), transcript);
    await app.live.running(id).attachTranscript(transcript, true);
    return id;
  }
  return { app, clock, names, idleSession };
}

const hibernated = (app: TestApp, id: string) => app.sessions.get(id).hibernated;

/**
 * Moves the clock on a second at a time (the file-stability checks wait on it; a transcript's
 * settling waits in real time) until `check` holds, for up to 10 s of real time.
 */
async function advanceUntil(clock: ManualClock, check: () => boolean): Promise<void> {
  for (const deadline = Date.now() + 10_000; !check() && Date.now() < deadline; await Bun.sleep(5))
    clock.advance(1_000);
  expect(check()).toBe(true);
}

/** Waits for `work`, moving the clock on meanwhile (a delivery waits for the screen on it). */
async function advancing<T>(clock: ManualClock, work: Promise<T>): Promise<T> {
  let done = false;
  const settled = work.finally(() => {
    done = true;
  });
  for (const deadline = Date.now() + 10_000; !done && Date.now() < deadline; await Bun.sleep(5))
    clock.advance(50);
  return settled;
}

/** Moves the clock on in small steps, for `ms` in all, letting what runs meanwhile run. */
async function advance(clock: ManualClock, ms: number): Promise<void> {
  for (let done = 0; done < ms; done += 250) {
    clock.advance(Math.min(250, ms - done));
    await Bun.sleep(1);
  }
}

describe("the timer, from the session's state", () => {
  test("an idle session's agent is ended after hibernateAfterMs idle, not before; the session stays idle", async () => {
    const { app, clock, names, idleSession } = await world();
    const id = await idleSession();
    const windowId = app.repo.get(id)!.windowId!;
    clock.advance(AFTER - 1);
    await Bun.sleep(5);
    expect(hibernated(app, id)).toBe(false);
    await advanceUntil(clock, () => hibernated(app, id));
    expect(app.sessions.get(id).status).toBe("idle");
    expect(app.tmux.window(windowId)).toBeUndefined();
    expect(app.live.get(id)).toBeUndefined();
    expect(names().filter((n) => n === "session.hibernated")).toHaveLength(1);
    expect(names()).not.toContain("session.ended");
  });

  test("a working session is never hibernated; its idle time counts from the end of its turn", async () => {
    const { app, clock, idleSession } = await world();
    const id = await idleSession();
    await hook(app, id, "UserPromptSubmit", { prompt: "work long", prompt_id: "w1" });
    expect(app.sessions.get(id).status).toBe("working");
    await advance(clock, AFTER + 5_000);
    expect(hibernated(app, id)).toBe(false);
    await hook(app, id, "Stop", {});
    await until(() => app.sessions.get(id).status === "idle");
    await advance(clock, AFTER - 1_000);
    expect(hibernated(app, id)).toBe(false);
    await advanceUntil(clock, () => hibernated(app, id));
  });

  test("a session waiting on a permission is never hibernated", async () => {
    const { app, clock, idleSession } = await world();
    const id = await idleSession();
    await hook(app, id, "PermissionRequest", { tool_name: "Bash", tool_input: { command: "make" } });
    expect(app.sessions.get(id).status).toBe("permission_prompt");
    await advance(clock, 3 * AFTER);
    expect(hibernated(app, id)).toBe(false);
    expect(app.live.get(id)).toBeDefined();
  });

  test("a session watched in a live terminal stays up; once every viewer left, its time counts again", async () => {
    const { app, clock, idleSession } = await world();
    const id = await idleSession();
    const first = app.sessions.hold(id);
    const second = app.sessions.hold(id);
    await advance(clock, 2 * AFTER);
    first();
    first(); // a release is once
    await advance(clock, 2 * AFTER);
    expect(hibernated(app, id)).toBe(false);
    second();
    await advanceUntil(clock, () => hibernated(app, id));
  });

  test("hibernate: false pins a session; its own afterMs wins over the server's", async () => {
    const { app, clock, idleSession } = await world();
    const pinned = await idleSession({ hibernate: false });
    const quick = await idleSession({ hibernate: { afterMs: 5_000 } });
    expect(app.sessions.get(pinned).hibernate).toBe(false);
    await advanceUntil(clock, () => hibernated(app, quick));
    expect(hibernated(app, pinned)).toBe(false);
    await advance(clock, 3 * AFTER);
    expect(hibernated(app, pinned)).toBe(false);
  });

  test("a session with no conversation on disk yet has nothing to resume: it stays up", async () => {
    const { app, clock, idleSession } = await world();
    const id = await idleSession({}, false);
    await advance(clock, 3 * AFTER);
    expect(hibernated(app, id)).toBe(false);
    expect(app.live.get(id)).toBeDefined();
  });

  test("a hibernated session still ends when its idle timeout comes (idle_timeout)", async () => {
    const { app, clock, idleSession } = await world({ idleTimeoutMs: 3 * AFTER });
    const id = await idleSession();
    await advanceUntil(clock, () => hibernated(app, id));
    await advanceUntil(clock, () => app.sessions.get(id).status === "completed");
    expect(app.repo.get(id)!.endReason).toBe("idle_timeout");
    expect(app.sessions.get(id).hibernated).toBe(false);
  });
});

describe("waking", () => {
  test("concurrent prompts wake it once: one new window, one session.woke, each prompt delivered", async () => {
    const admitted: string[] = [];
    const admission = async (agent: string): Promise<AdmissionHold> => {
      admitted.push(agent);
      return { bind() {}, release() {} };
    };
    const { app, clock, names, idleSession } = await world({ admission });
    const id = await idleSession();
    await advanceUntil(clock, () => hibernated(app, id));
    admitted.length = 0;
    const [a, b] = await Promise.all([app.sessions.wake(id, "prompt"), app.sessions.wake(id, "terminal")]);
    expect(a.hibernated).toBe(false);
    expect(b.hibernated).toBe(false);
    expect(names().filter((n) => n === "session.woke")).toHaveLength(1);
    expect((await app.tmux.listPanes()).filter((p) => p.tag === id && !p.dead)).toHaveLength(1);
    expect(admitted).toEqual(["claude"]);
    expect(app.live.get(id)).toBeDefined();
    const sent = await advancing(clock, app.sessions.send(id, "go on"));
    expect(sent.delivered).toBe(true);
    expect(names().filter((n) => n === "session.created")).toHaveLength(1);
  });

  test("a prompt to a hibernated session wakes it and is delivered once, on a new secret", async () => {
    const { app, clock, names, idleSession } = await world();
    const id = await idleSession();
    const secret = app.repo.get(id)!.hookSecret;
    await advanceUntil(clock, () => hibernated(app, id));
    const sent = await advancing(
      clock,
      app.request("POST", `/v1/sessions/${id}/send`, { body: { text: "next step" } }),
    );
    expect(sent.status).toBe(200);
    expect((await sent.json()).delivered).toBe(true);
    expect(app.repo.get(id)!.hookSecret).not.toBe(secret);
    const woke = app.events.find((e) => e.event === "session.woke");
    expect(woke?.meta).toMatchObject({ by: "prompt" });
    expect(names().filter((n) => n === "session.created")).toHaveLength(1);
  });

  test.each([
    ["a fork", "fork", undefined, "UNSUPPORTED_BY_AGENT"],
    ["a teammate's spawn", "spawn", { prompt: "help" }, "NOT_A_TERMINAL_SESSION"],
  ])(
    "%s of a hibernated headless (acp) session is refused without waking it",
    async (_, verb, body, code) => {
      const { app, clock, names, idleSession } = await world();
      const id = await idleSession();
      await advanceUntil(clock, () => hibernated(app, id));
      // The fake world's agents run in tmux; the record says what a headless session's would.
      app.db.query("UPDATE sessions SET driver = 'acp' WHERE id = ?").run(id);
      const refused = await app.request("POST", `/v1/sessions/${id}/${verb}`, body ? { body } : {});
      expect(await refused.json()).toMatchObject({ code });
      expect(names()).not.toContain("session.woke");
      expect(hibernated(app, id)).toBe(true);
    },
  );

  test("POST /wake of a running session answers it as it is; of an unknown one, 404", async () => {
    const { app, idleSession } = await world();
    const id = await idleSession();
    const woke = await app.request("POST", `/v1/sessions/${id}/wake`);
    expect(woke.status).toBe(200);
    expect((await woke.json()).hibernated).toBe(false);
    const missing = await app.request("POST", `/v1/sessions/${crypto.randomUUID()}/wake`);
    expect(missing.status).toBe(404);
    expect((await missing.json()).code).toBe("SESSION_NOT_FOUND");
  });
});
