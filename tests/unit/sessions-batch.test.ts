import { describe, expect, test } from "bun:test";
import { createManualClock } from "../fakes/clock.ts";
import { testApp } from "../helpers/app.ts";
import { pane, simulateAgents } from "../helpers/simulated-agent.ts";
import { tempDir } from "../helpers/temp.ts";

// biome-ignore lint/suspicious/noExplicitAny: response bodies are inspected field by field
type Json = Record<string, any>;

describe("batch create and delete", () => {
  test("partial success: created sessions and failures by index with their envelope", async () => {
    const app = testApp();
    simulateAgents(app);
    const response = await app.request("POST", "/v1/sessions/batch", {
      body: {
        sessions: [
          { workDir: tempDir(), name: "one", prompt: "hello" },
          { workDir: "relative/path" },
          { workDir: tempDir(), name: "three" },
          { workDir: "/does/not/exist" },
        ],
      },
    });
    expect(response.status).toBe(200);
    const body = (await response.json()) as Json;
    expect(body.created.map((s: Json) => s.name).sort()).toEqual(["one", "three"]);
    expect(body.created.find((s: Json) => s.name === "one").promptDelivery).toEqual({
      delivered: true,
      attempts: 1,
    });
    expect(body.failed).toEqual([
      {
        index: 1,
        error: 'workDir must be an absolute path, got "relative/path"',
        code: "INVALID_WORKDIR",
        statusCode: 400,
      },
      {
        index: 3,
        error: "workDir does not exist: /does/not/exist",
        code: "INVALID_WORKDIR",
        statusCode: 400,
      },
    ]);
  });

  test("more than 50, or none, is a 400 before anything starts", async () => {
    const app = testApp();
    const many = Array.from({ length: 51 }, () => ({ workDir: "/tmp" }));
    expect((await app.request("POST", "/v1/sessions/batch", { body: { sessions: many } })).status).toBe(400);
    expect((await app.request("POST", "/v1/sessions/batch", { body: { sessions: [] } })).status).toBe(400);
    expect(app.tmux.server.windows.size).toBe(0);
  });

  test("batch delete answers {killed, notFound}", async () => {
    const app = testApp();
    simulateAgents(app);
    const a = (await (
      await app.request("POST", "/v1/sessions", { body: { workDir: tempDir() } })
    ).json()) as Json;
    const b = (await (
      await app.request("POST", "/v1/sessions", { body: { workDir: tempDir() } })
    ).json()) as Json;
    await app.request("DELETE", `/v1/sessions/${b.id}`);
    const response = await app.request("DELETE", "/v1/sessions/batch", {
      body: { ids: [a.id, b.id, "nope"] },
    });
    expect(await response.json()).toEqual({ killed: [a.id], notFound: [b.id, "nope"] });
    expect(app.repo.get(a.id)!.status).toBe("killed");
  });
});

describe("idle timeout", () => {
  test("an idle session past SVC_IDLE_TIMEOUT_MS ends as completed, reason idle_timeout, window closed", async () => {
    const clock = createManualClock();
    const app = testApp({ clock, idleTimeoutMs: 600_000 });
    const created = (await (
      await app.request("POST", "/v1/sessions", { body: { workDir: tempDir() } })
    ).json()) as Json;
    const record = () => app.repo.get(created.id)!;
    app.tmux.setScreen(record().paneId!, pane("01-idle-startup"));
    await app.live.running(created.id).readScreen();
    expect(record().status).toBe("idle");
    const windowId = record().windowId!;
    clock.advance(599_999);
    expect(record().status).toBe("idle");
    clock.advance(1);
    await Bun.sleep(10);
    expect(record()).toMatchObject({ status: "completed", endReason: "idle_timeout" });
    expect(app.tmux.window(windowId)).toBeUndefined();
    const ended = app.events.find((e) => e.event === "session.ended")!;
    expect(ended.meta.reason).toBe("idle_timeout");
    expect(app.events.some((e) => e.event === "status.stopped")).toBe(true);
  });

  test("activity restarts the idle period; 0 disables it", async () => {
    const clock = createManualClock();
    const app = testApp({ clock, idleTimeoutMs: 1000 });
    const created = (await (
      await app.request("POST", "/v1/sessions", { body: { workDir: tempDir() } })
    ).json()) as Json;
    const paneId = app.repo.get(created.id)!.paneId!;
    app.tmux.setScreen(paneId, pane("01-idle-startup"));
    await app.live.running(created.id).readScreen();
    clock.advance(900);
    app.live.running(created.id).observe({ kind: "prompt-submitted", text: "x" }, "hook");
    app.live.running(created.id).observe({ kind: "turn-ended" }, "hook");
    clock.advance(900);
    expect(app.repo.get(created.id)!.status).toBe("idle");
    const off = testApp({ clock, idleTimeoutMs: 0 });
    const other = (await (
      await off.request("POST", "/v1/sessions", { body: { workDir: tempDir() } })
    ).json()) as Json;
    off.tmux.setScreen(off.repo.get(other.id)!.paneId!, pane("01-idle-startup"));
    await off.live.running(other.id).readScreen();
    clock.advance(10_000_000);
    expect(off.repo.get(other.id)!.status).toBe("idle");
  });

  test("signs of life that leave it idle (a shell command's transcript lines) restart the period too", async () => {
    const clock = createManualClock();
    const app = testApp({ clock, idleTimeoutMs: 1000 });
    const created = (await (
      await app.request("POST", "/v1/sessions", { body: { workDir: tempDir() } })
    ).json()) as Json;
    app.tmux.setScreen(app.repo.get(created.id)!.paneId!, pane("01-idle-startup"));
    await app.live.running(created.id).readScreen();
    for (let i = 0; i < 5; i++) {
      clock.advance(900);
      app.live
        .running(created.id)
        .observe({ kind: "input-recorded", text: "!ls", promptId: `u${i}` }, "transcript");
    }
    expect(app.repo.get(created.id)!.status).toBe("idle");
    // lastActivityAt follows the activity (saved at most once a second).
    expect(clock.now() - Date.parse(app.repo.get(created.id)!.lastActivityAt)).toBeLessThan(1000);
    clock.advance(1000);
    await Bun.sleep(10);
    expect(app.repo.get(created.id)!.status).toBe("completed");
  });
});

describe("fork and resume guards", () => {
  test("forking a session with no conversation yet → 409; resuming a live one → 409; unknown → 404", async () => {
    const app = testApp();
    simulateAgents(app);
    const created = (await (
      await app.request("POST", "/v1/sessions", { body: { workDir: tempDir() } })
    ).json()) as Json;
    const fork = await app.request("POST", `/v1/sessions/${created.id}/fork`);
    expect(fork.status).toBe(409);
    expect((await fork.json()).error).toContain("no conversation yet");
    const resume = await app.request("POST", `/v1/sessions/${created.id}/resume`);
    expect(resume.status).toBe(409);
    expect((await app.request("POST", "/v1/sessions/nope/resume")).status).toBe(404);
    expect((await app.request("POST", "/sessions/nope/fork")).status).toBe(404);
  });
});

describe("resume", () => {
  test("relaunches an ended session under its id with a new hook secret; the old secret is refused", async () => {
    const app = testApp();
    simulateAgents(app);
    const created = (await (
      await app.request("POST", "/v1/sessions", { body: { workDir: tempDir() } })
    ).json()) as Json;
    const transcript = `${tempDir()}/${created.id}.jsonl`;
    await Bun.write(
      transcript,
      `${JSON.stringify({ type: "user", message: { role: "user", content: "hi" } })}\n`,
    );
    app.repo.update(created.id, { transcriptPath: transcript });
    const oldSecret = app.repo.get(created.id)!.hookSecret;
    await app.request("DELETE", `/v1/sessions/${created.id}`);
    const resumed = await app.request("POST", `/v1/sessions/${created.id}/resume`);
    expect(resumed.status).toBe(200);
    expect((await resumed.json()).id).toBe(created.id);
    const record = app.repo.get(created.id)!;
    expect(record.status).not.toBe("killed");
    expect(record.hookSecret).not.toBe(oldSecret);
    const window = app.tmux.window(record.windowId!)!;
    expect(window.command).toContain("--resume");
    const stale = await app.request("POST", "/v1/hooks/SessionEnd", {
      body: { session_id: created.id, reason: "other" },
      headers: { "x-svc-hook-secret": oldSecret },
    });
    expect(stale.status).toBe(401);
  });
});
