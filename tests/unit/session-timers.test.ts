import { describe, expect, test } from "bun:test";
import { createManualClock } from "../fakes/clock.ts";
import { testApp } from "../helpers/app.ts";
import { hook, idleWithInput, pane } from "../helpers/simulated-agent.ts";
import { tempDir } from "../helpers/temp.ts";
import { until } from "../helpers/until.ts";

/** A session on the fake tmux whose timers run on a manual clock. */
async function session() {
  const clock = createManualClock();
  const app = testApp({ clock });
  const created = await app.request("POST", "/v1/sessions", { body: { workDir: tempDir() } });
  const id = (await created.json()).id as string;
  const paneId = app.repo.get(id)!.paneId!;
  app.tmux.setScreen(paneId, pane("01-idle-startup"));
  await app.live.running(id).readScreen();
  expect(app.repo.get(id)!.status).toBe("idle");
  const names = () => app.events.map((e) => e.event);
  return { app, clock, id, paneId, names };
}

describe("timers on an injected clock", () => {
  test("stall after the threshold with no activity; recovery on the next activity", async () => {
    const { app, clock, id, paneId, names } = await session();
    await hook(app, id, "UserPromptSubmit", { prompt: "hang forever", prompt_id: "h1" });
    app.tmux.setScreen(paneId, pane("04-working"));
    await app.live.running(id).readScreen();
    clock.advance(119_999);
    expect(app.repo.get(id)!.status).toBe("working");
    clock.advance(1);
    expect(app.repo.get(id)!.status).toBe("stalled");
    expect(names()).toContain("status.stall");
    expect(names()).toContain("session.stalled");
    await hook(app, id, "PostToolUse", { tool_name: "Bash" });
    expect(app.repo.get(id)!.status).toBe("working");
    expect(names()).toContain("status.recovered");
  });

  test("a permission prompt unanswered for the timeout emits status.permission_timeout once, answers nothing", async () => {
    const { app, clock, id, paneId, names } = await session();
    await hook(app, id, "PermissionRequest", { tool_name: "Bash", tool_input: { command: "make" } });
    const typedBefore = app.tmux.typed(paneId).length;
    clock.advance(299_999);
    expect(names()).not.toContain("status.permission_timeout");
    clock.advance(1);
    expect(names().filter((n) => n === "status.permission_timeout")).toHaveLength(1);
    clock.advance(600_000);
    expect(names().filter((n) => n === "status.permission_timeout")).toHaveLength(1);
    expect(app.repo.get(id)!.status).toBe("permission_prompt");
    expect(app.tmux.typed(paneId).length).toBe(typedBefore);
  });

  test("an answered prompt never times out", async () => {
    const { app, clock, id, names } = await session();
    await hook(app, id, "PermissionRequest", { tool_name: "Bash", tool_input: { command: "make" } });
    await hook(app, id, "PostToolUse", { tool_name: "Bash" });
    clock.advance(400_000);
    expect(names()).not.toContain("status.permission_timeout");
  });

  test("an idle screen without the Stop hook confirms to idle only on a fresh capture CONFIRM_MS later", async () => {
    const { app, clock, id, paneId } = await session();
    await hook(app, id, "UserPromptSubmit", { prompt: "x", prompt_id: "c1" });
    let captures = 0;
    const capture = app.tmux.capturePane.bind(app.tmux);
    app.tmux.capturePane = (target, options) => {
      captures++;
      return capture(target, options);
    };
    // The screen shows the turn, then an idle prompt (the Stop hook lost).
    app.tmux.setScreen(paneId, pane("04-working"));
    await app.live.running(id).readScreen();
    app.tmux.setScreen(paneId, idleWithInput(""));
    await app.live.running(id).readScreen();
    const before = captures;
    clock.advance(1_000);
    expect(app.repo.get(id)!.status).toBe("working");
    clock.advance(500);
    // The decision is a capture of its own, made now: not the frame seen 1.5 s ago.
    await until(() => app.repo.get(id)!.status === "idle");
    expect(captures).toBeGreaterThan(before);
  });

  test("a dialog refused in the terminal ends, though a transcript line comes during its confirmation", async () => {
    const { app, clock, id, paneId } = await session();
    const live = app.live.running(id);
    await hook(app, id, "UserPromptSubmit", { prompt: "run cmd: x", prompt_id: "r1" });
    await hook(app, id, "PermissionRequest", {
      tool_name: "Bash",
      tool_input: { command: "touch created-by-bash.txt" },
    });
    app.tmux.setScreen(paneId, pane("06-permission-bash"));
    await live.readScreen();
    // Esc pressed in the terminal: no hook; the screen goes still on an idle prompt.
    app.tmux.setScreen(paneId, idleWithInput(""));
    await live.readScreen();
    // The rejection's tool_result line is read meanwhile: a sign of life, not of the state.
    live.observe({ kind: "activity" }, "transcript");
    clock.advance(1_500);
    await until(() => app.repo.get(id)!.status === "idle");
    expect(app.repo.get(id)!.pendingPermission).toBeNull();
  });
});
