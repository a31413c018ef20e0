import { describe, expect, test } from "bun:test";
import { readScreen, trustDialogFolder } from "../../src/agents/claude/adapter.ts";
import { AUTO_ANSWER_GRACE_MS } from "../../src/drivers/tmux/auto-answer.ts";
import { pendingPermissionOf } from "../../src/events/bus.ts";
import { createManualClock } from "../fakes/clock.ts";
import { type TestApp, testApp } from "../helpers/app.ts";
import { pane } from "../helpers/simulated-agent.ts";
import { tempDir } from "../helpers/temp.ts";
import { until } from "../helpers/until.ts";

// biome-ignore lint/suspicious/noExplicitAny: response bodies are inspected field by field
type Json = Record<string, any>;

const TRUST = pane("21-dialog-trust");
/** The folder the captured trust dialog asks about. */
const FIXTURE_FOLDER = "/srv/agent-harness-J7aKZA/work";
const API_KEY = pane("22-dialog-api-key");
const BYPASS = pane("23-dialog-bypass");
const IDLE = pane("01-idle-startup");

/**
 * A fresh session whose agent opens on `dialog` and, like Claude Code, goes to its idle prompt
 * when Enter answers the folder-trust dialog (unless `enterLost`).
 */
async function sessionOn(app: TestApp, dialog: string, options: { enterLost?: boolean } = {}) {
  const created = await app.request("POST", "/v1/sessions", { body: { workDir: tempDir() } });
  expect(created.status).toBe(201);
  const id = ((await created.json()) as Json).id as string;
  const paneId = app.repo.get(id)!.paneId!;
  // The dialog names the folder the agent runs in, as Claude Code's does: the session's workDir.
  const trust = TRUST.replace(FIXTURE_FOLDER, app.repo.get(id)!.workDir);
  if (dialog === TRUST) dialog = trust;
  const sendKeys = app.tmux.sendKeys.bind(app.tmux);
  let screen = dialog;
  app.tmux.sendKeys = async (target, keys) => {
    await sendKeys(target, keys);
    if (target === paneId && screen === trust && keys.includes("Enter") && !options.enterLost) {
      screen = IDLE;
      app.tmux.setScreen(paneId, IDLE);
    }
  };
  app.tmux.setScreen(paneId, dialog);
  await app.live.running(id).readScreen();
  const keys = () => app.tmux.typed(paneId);
  return { id, paneId, keys, trust };
}

/** Every pending permission the session published or stored. */
function trustPrompts(app: TestApp, id: string): Json[] {
  const published = app.events
    .filter((e) => e.session?.id === id)
    .map((e) => pendingPermissionOf(e) as Json | null);
  return [...published, app.repo.get(id)!.pendingPermission].filter((p) => p?.kind === "trust") as Json[];
}

describe("the Claude adapter marks only the folder-trust dialog as ag's to answer", () => {
  test("with trustWorkdir: the trust dialog carries Enter; the API-key and bypass dialogs carry nothing", () => {
    expect(readScreen(TRUST, {}, true).autoAnswer).toEqual({ dialog: "folder-trust", keys: ["Enter"] });
    expect(readScreen(API_KEY, {}, true).autoAnswer).toBeUndefined();
    expect(readScreen(BYPASS, {}, true).autoAnswer).toBeUndefined();
    expect(readScreen(IDLE, {}, true).autoAnswer).toBeUndefined();
  });

  test("only a dialog about the session's own folder is ag's to answer", () => {
    const folder = "/srv/agent-harness-J7aKZA/work";
    expect(trustDialogFolder(TRUST)).toBe(folder);
    expect(readScreen(TRUST, { workDir: folder }, true).autoAnswer).toEqual({
      dialog: "folder-trust",
      keys: ["Enter"],
    });
    const elsewhere = readScreen(TRUST, { workDir: "/srv/agent-harness-J7aKZA/work/sub" }, true);
    expect(elsewhere.autoAnswer).toBeUndefined();
    expect(elsewhere.observation).toMatchObject({ kind: "permission", request: { kind: "trust" } });
  });

  test("without trustWorkdir the trust dialog stays a permission of kind trust", () => {
    const reading = readScreen(TRUST, {}, false);
    expect(reading.autoAnswer).toBeUndefined();
    expect(reading.observation).toEqual({
      kind: "permission",
      request: { kind: "trust", detail: "trust this folder?", dialog: "folder-trust" },
    });
  });
});

describe("a folder-trust dialog that shows although trustWorkdir is on", () => {
  test("ag presses Enter once, notes it, and the session goes on to idle without a trust prompt", async () => {
    const app = testApp();
    const { id, keys } = await sessionOn(app, TRUST);
    await until(() => app.repo.get(id)!.status === "idle");
    expect(keys()).toEqual(["Enter"]);
    expect(trustPrompts(app, id)).toEqual([]);
    expect(app.events.map((e) => e.event)).not.toContain("permission.requested");
    const notes = app.diagnostics.list().events.filter((e) => e.type === "session.auto_answer");
    expect(notes).toHaveLength(1);
    expect(notes[0]!.detail).toContain(`session ${id}: answered the agent's folder-trust dialog itself`);
    expect(app.logs.some((l) => l.includes("folder-trust dialog itself"))).toBe(true);
  });

  test("a dialog that outlives the answer goes to the user after the grace period; Enter is pressed once", async () => {
    const clock = createManualClock();
    const app = testApp({ clock });
    const { id, paneId, keys, trust } = await sessionOn(app, TRUST, { enterLost: true });
    await until(() => keys().length === 1);
    // Captures taken before the agent redraws still show the dialog: held back, no second Enter.
    app.tmux.setScreen(paneId, trust);
    await app.live.running(id).readScreen();
    clock.advance(AUTO_ANSWER_GRACE_MS - 1);
    expect(app.repo.get(id)!.pendingPermission).toBeNull();
    // The grace period ends with a read of its own (the dialog redraws nothing by itself).
    clock.advance(1);
    await until(() => app.repo.get(id)!.status === "permission_prompt");
    expect(app.repo.get(id)!.pendingPermission).toMatchObject({
      kind: "trust",
      detail: "trust this folder?",
    });
    expect(app.events.map((e) => e.event)).toContain("permission.requested");
    app.tmux.setScreen(paneId, trust);
    await app.live.running(id).readScreen();
    expect(keys()).toEqual(["Enter"]);
    // The user's approval is the second and last Enter.
    const approved = await app.request("POST", `/v1/sessions/${id}/approve`);
    expect(approved.status).toBe(200);
    expect(keys()).toEqual(["Enter", "Enter"]);
  });

  test("the API-key and bypass-permissions dialogs are never answered by ag", async () => {
    const app = testApp();
    for (const [dialog, detail] of [
      [API_KEY, "use the API key found in the environment?"],
      [BYPASS, "accept bypass-permissions mode?"],
    ] as const) {
      const { id, keys } = await sessionOn(app, dialog);
      await until(() => app.repo.get(id)!.status === "permission_prompt");
      expect(app.repo.get(id)!.pendingPermission).toMatchObject({ kind: "trust", detail });
      expect(keys()).toEqual([]);
    }
    expect(app.diagnostics.list().events.filter((e) => e.type === "session.auto_answer")).toEqual([]);
  });
});

describe("trustWorkdir off", () => {
  test("the trust dialog is a permission prompt of kind trust that the user approves", async () => {
    const app = testApp({ trustWorkdir: false });
    const { id, keys } = await sessionOn(app, TRUST);
    await until(() => app.repo.get(id)!.status === "permission_prompt");
    expect(app.repo.get(id)!.pendingPermission).toMatchObject({
      kind: "trust",
      detail: "trust this folder?",
    });
    expect(app.events.map((e) => e.event)).toContain("permission.requested");
    expect(keys()).toEqual([]);
    const approved = await app.request("POST", `/v1/sessions/${id}/approve`);
    expect(approved.status).toBe(200);
    expect(keys()).toEqual(["Enter"]);
    await until(() => app.repo.get(id)!.status === "idle", 5000);
    expect(app.diagnostics.list().events.filter((e) => e.type === "session.auto_answer")).toEqual([]);
  });
});
