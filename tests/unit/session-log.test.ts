import { describe, expect, test } from "bun:test";
import { createEventBus, type EventBus } from "../../src/events/bus.ts";
import { logSessionEvents } from "../../src/events/log.ts";
import { createLogger } from "../../src/shared/log.ts";
import { testApp } from "../helpers/app.ts";
import { hook, idleSession, simulateAgents } from "../helpers/simulated-agent.ts";

// biome-ignore lint/suspicious/noExplicitAny: log records are inspected field by field
type Json = Record<string, any>;

/** A bus whose session events are logged, as the runtime does, to captured lines. */
function logged(json: boolean) {
  const bus = createEventBus();
  const lines: string[] = [];
  const logger = createLogger({
    level: "info",
    json,
    stream: { write: (l: string) => lines.push(l) } as never,
  });
  logSessionEvents(bus, logger);
  /** The lines so far without their time stamp (an idle line waits for its burst to end). */
  const text = async () => {
    await Bun.sleep(0);
    return lines.map((l) => l.replace(/^\S+ /, "").trimEnd());
  };
  return { bus, lines, text };
}

const ID = /[0-9a-f]{8}/;

describe("one info line per session event, from the real state writer", () => {
  async function world(json = false) {
    const log = logged(json);
    const app = testApp({ bus: log.bus });
    simulateAgents(app);
    const { id, paneId } = await idleSession(app, { name: "alpha" });
    return { ...log, app, id, paneId, short: id.slice(0, 8) };
  }
  const post = (app: ReturnType<typeof testApp>, path: string, body?: unknown) =>
    app.request("POST", path, body === undefined ? {} : { body });

  test("created, ready, waits for permission, approved, turn completed, killed: one line each", async () => {
    const { app, id, short, text } = await world();
    const workDir = app.repo.get(id)!.workDir;
    await hook(app, id, "UserPromptSubmit", { prompt: "run it", prompt_id: "p1" });
    await hook(app, id, "PermissionRequest", { tool_name: "Bash", tool_input: { command: "make test" } });
    await post(app, `/v1/sessions/${id}/approve`);
    await hook(app, id, "Stop");
    await app.request("DELETE", `/v1/sessions/${id}`);
    expect(await text()).toEqual([
      `INFO  session alpha (${short}): created in ${workDir}`,
      `INFO  session alpha (${short}): idle (ready)`,
      `INFO  session alpha (${short}): waits for permission: Bash: make test`,
      `INFO  session alpha (${short}): idle (turn completed)`,
      `INFO  session alpha (${short}): ended (killed)`,
    ]);
  });

  test("a question, a plan, a rejected dialog and a failed turn", async () => {
    const { app, id, short, text } = await world();
    const seen = (await text()).length;
    await hook(app, id, "UserPromptSubmit", { prompt: "ask me", prompt_id: "q1" });
    await hook(app, id, "PermissionRequest", {
      tool_name: "AskUserQuestion",
      tool_input: {
        questions: [
          {
            question: "Which color?",
            header: "C",
            multiSelect: false,
            options: [{ label: "Red" }, { label: "Blue" }],
          },
        ],
      },
    });
    await post(app, `/v1/sessions/${id}/reject`);
    await hook(app, id, "UserPromptSubmit", { prompt: "make a plan", prompt_id: "q2" });
    await hook(app, id, "PermissionRequest", {
      tool_name: "ExitPlanMode",
      tool_input: { plan: "1. do it\n2. test it" },
    });
    await post(app, `/v1/sessions/${id}/approve`);
    await hook(app, id, "StopFailure", { error: "rate_limit" });
    expect((await text()).slice(seen)).toEqual([
      `INFO  session alpha (${short}): waits for an answer: Which color? — 1. Red · 2. Blue`,
      `INFO  session alpha (${short}): idle (turn interrupted)`,
      `INFO  session alpha (${short}): waits for plan approval: 1. do it`,
      `INFO  session alpha (${short}): idle (turn failed: rate_limit)`,
    ]);
  });

  test("JSON logs: the same words as msg, and the fields", async () => {
    const { app, id, lines } = await world(true);
    await hook(app, id, "UserPromptSubmit", { prompt: "edit", prompt_id: "p1" });
    await hook(app, id, "PermissionRequest", { tool_name: "Write", tool_input: { file_path: "/w/a.txt" } });
    await Bun.sleep(0);
    const records = lines.map((l) => JSON.parse(l) as Json);
    expect(records[0]).toMatchObject({
      level: "info",
      event: "session.created",
      sessionId: id,
      status: "working",
      workDir: app.repo.get(id)!.workDir,
      msg: expect.stringMatching(/^session alpha \([0-9a-f]{8}\): created in /),
    });
    expect(records.at(-1)).toMatchObject({
      event: "status.permission",
      sessionId: id,
      status: "permission_prompt",
      pendingPermission: { kind: "tool", tool: "Write" },
      msg: expect.stringContaining("waits for permission: Write: /w/a.txt"),
    });
  });

  test("a name that already holds the id is not repeated", async () => {
    const log = logged(false);
    const app = testApp({ bus: log.bus });
    simulateAgents(app);
    const { id } = await idleSession(app);
    const name = app.repo.get(id)!.name;
    expect(name).toMatch(ID);
    expect((await log.text())[0]).toBe(`INFO  session ${name}: created in ${app.repo.get(id)!.workDir}`);
  });
});

describe("events with twins are logged once", () => {
  const session = { id: "0b5e55ed-1111-4000-8000-000000000001", name: "beta", workDir: "/w" };
  const meta = (status: string, previous: string) =>
    ({ status, previous, pendingPermission: null, source: "hook" }) as Json;
  const publish = (bus: EventBus, event: string, m: unknown, detail = "") =>
    bus.publish({ event, session, detail, meta: m } as never);

  test("stalled, recovered, and an end with its reason; their twins say nothing more", async () => {
    const { bus, text } = logged(false);
    publish(bus, "session.stalled", meta("stalled", "working"));
    publish(bus, "status.stall", meta("stalled", "working"));
    publish(bus, "status.recovered", meta("working", "stalled"));
    publish(bus, "session.working", meta("working", "stalled"));
    publish(bus, "status.working", meta("working", "stalled"));
    publish(bus, "status.dead", meta("crashed", "working"), "agent exited with status 1");
    publish(
      bus,
      "session.ended",
      { ...meta("crashed", "working"), reason: "failed" },
      "agent exited with status 1",
    );
    expect(await text()).toEqual([
      "INFO  session beta (0b5e55ed): stalled (no agent activity for its stall threshold)",
      "INFO  session beta (0b5e55ed): recovered (working)",
      "INFO  session beta (0b5e55ed): ended (failed): agent exited with status 1",
    ]);
  });

  test("an idle timeout and a kill: one end line each", async () => {
    const { bus, text } = logged(false);
    publish(bus, "status.stopped", { ...meta("completed", "idle"), reason: "idle_timeout" });
    publish(bus, "session.ended", { ...meta("completed", "idle"), reason: "idle_timeout" }, "idle_timeout");
    publish(bus, "session.killed", meta("killed", "idle"));
    publish(bus, "session.ended", { ...meta("killed", "idle"), reason: "killed" }, "killed");
    expect(await text()).toEqual([
      "INFO  session beta (0b5e55ed): ended (idle_timeout)",
      "INFO  session beta (0b5e55ed): ended (killed)",
    ]);
  });

  test("an idle line keeps its place before the next line of another event", async () => {
    const { bus, text } = logged(false);
    publish(bus, "session.idle", meta("idle", "working"));
    publish(bus, "status.idle", meta("idle", "working"));
    publish(bus, "session.ended", { ...meta("killed", "idle"), reason: "killed" }, "killed");
    expect(await text()).toEqual([
      "INFO  session beta (0b5e55ed): idle",
      "INFO  session beta (0b5e55ed): ended (killed)",
    ]);
  });

  test("a detail is one line, clipped: a long command cannot flood the terminal", async () => {
    const { bus, text } = logged(false);
    const pending = { id: "perm-1", kind: "tool", tool: "Bash", detail: "x" };
    const m = { ...meta("permission_prompt", "working"), pendingPermission: pending };
    publish(bus, "permission.requested", m, `Bash: make\nmake test ${"y".repeat(300)}`);
    publish(bus, "status.permission", m, `Bash: make\nmake test ${"y".repeat(300)}`);
    const [only, ...rest] = await text();
    expect(rest).toEqual([]);
    expect(only).toStartWith(
      "INFO  session beta (0b5e55ed): waits for permission: Bash: make ⏎ make test yyy",
    );
    expect(only!.endsWith("y…")).toBe(true);
    expect(only!.length).toBeLessThan(300);
  });

  test("nothing is logged below info", async () => {
    const bus = createEventBus();
    const lines: string[] = [];
    logSessionEvents(
      bus,
      createLogger({ level: "warn", json: false, stream: { write: (l: string) => lines.push(l) } as never }),
    );
    publish(bus, "status.stall", meta("stalled", "working"));
    await Bun.sleep(0);
    expect(lines).toEqual([]);
  });
});
