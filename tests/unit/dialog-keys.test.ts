import { describe, expect, test } from "bun:test";
import { createClaudeAdapter, readScreen } from "../../src/agents/claude/adapter.ts";
import { testApp } from "../helpers/app.ts";
import { pane } from "../helpers/simulated-agent.ts";
import { tempDir } from "../helpers/temp.ts";
import { until } from "../helpers/until.ts";

// biome-ignore lint/suspicious/noExplicitAny: response bodies are inspected field by field
type Json = Record<string, any>;

/**
 * Claude Code's start-up dialogs as captured from the real CLI, with the keys that pick their
 * "yes" and "no" (agent harness keystroke rules). Each preselects a different option: Enter
 * alone would refuse the API key, and on the bypass-permissions dialog it would quit the agent.
 */
const DIALOGS = [
  {
    pane: "21-dialog-trust",
    dialog: "folder-trust",
    detail: "trust this folder?",
    approve: ["Enter"], // "1. Yes, I trust this folder" is preselected
    reject: ["Escape"], // cancel: the agent exits, as with "2. No, exit"
  },
  {
    pane: "22-dialog-api-key",
    dialog: "api-key",
    detail: "use the API key found in the environment?",
    // "2. No (recommended)" is preselected: its digit picks and confirms an option in one key, where
    // an arrow and Enter could lose the arrow and confirm "No".
    approve: ["1"],
    reject: ["2"],
  },
  {
    pane: "23-dialog-bypass",
    dialog: "bypass-permissions",
    detail: "accept bypass-permissions mode?",
    approve: ["2"], // "1. No, exit" is preselected; "2. Yes, I accept" is below it
    reject: ["1"],
  },
] as const;

const adapter = createClaudeAdapter({
  home: tempDir("ag-home-"),
  dataDir: null,
  trustWorkdir: false,
  selfCommand: ["ag"],
  isRoot: false,
});

describe("the Claude adapter's keys for each start-up dialog", () => {
  for (const d of DIALOGS) {
    test(`${d.pane}: a trust prompt naming ${d.dialog}, answered with its own keys`, () => {
      const { observation } = readScreen(pane(d.pane));
      expect(observation).toEqual({
        kind: "permission",
        request: { kind: "trust", detail: d.detail, dialog: d.dialog },
      });
      const request = observation.kind === "permission" ? observation.request : null;
      expect(adapter.keys.approve(request!)).toEqual([...d.approve]);
      expect(adapter.keys.reject(request!)).toEqual([...d.reject]);
    });
  }

  test("a trust prompt without a dialog id (stored by an older ag) keeps the folder-trust keys", () => {
    expect(adapter.keys.approve({ kind: "trust" })).toEqual(["Enter"]);
    expect(adapter.keys.reject({ kind: "trust" })).toEqual(["Escape"]);
  });

  test("2.1.328 numbers no option: an arrow, then Enter (after the dialog's settle time)", () => {
    const newer = adapter.forVersion("2.1.328");
    expect(newer.keys.dialogSettleMs).toBeGreaterThan(0);
    expect(newer.keys.approve({ kind: "trust", dialog: "api-key" })).toEqual(["Up", "Enter"]);
    expect(newer.keys.approve({ kind: "trust", dialog: "bypass-permissions" })).toEqual(["Down", "Enter"]);
    expect(newer.keys.approve({ kind: "trust", dialog: "folder-trust" })).toEqual(["Down", "Enter"]);
  });

  test("tool, plan and question prompts keep their keys", () => {
    expect(adapter.keys.approve({ kind: "tool" })).toEqual(["Enter"]);
    expect(adapter.keys.approve({ kind: "plan" })).toEqual(["2"]);
    for (const kind of ["tool", "plan", "question"] as const)
      expect(adapter.keys.reject({ kind })).toEqual(["Escape"]);
  });
});

describe("approve and reject press the pending dialog's keys", () => {
  for (const d of DIALOGS) {
    for (const answer of ["approve", "reject"] as const) {
      test(`${answer} on the ${d.dialog} dialog sends ${d[answer].join(" ")}`, async () => {
        // trustWorkdir off: ag answers no dialog itself, every one is the user's.
        const app = testApp({ trustWorkdir: false });
        const created = await app.request("POST", "/v1/sessions", { body: { workDir: tempDir() } });
        expect(created.status).toBe(201);
        const id = ((await created.json()) as Json).id as string;
        const paneId = app.repo.get(id)!.paneId!;
        app.tmux.setScreen(paneId, pane(d.pane));
        await app.live.running(id).readScreen();
        await until(() => app.repo.get(id)!.status === "permission_prompt");

        // The API reports which dialog it is.
        const session = (await (await app.request("GET", `/v1/sessions/${id}`)).json()) as Json;
        expect(session.pendingPermission).toMatchObject({
          kind: "trust",
          detail: d.detail,
          dialog: d.dialog,
        });
        expect(app.tmux.typed(paneId)).toEqual([]);

        const answered = await app.request("POST", `/v1/sessions/${id}/${answer}`, {
          body: { permissionId: session.pendingPermission.id },
        });
        expect(answered.status).toBe(200);
        expect(app.tmux.typed(paneId)).toEqual([...d[answer]]);
      });
    }
  }
});
