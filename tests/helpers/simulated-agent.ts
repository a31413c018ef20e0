import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { FakeTmux } from "../fakes/tmux.ts";
import type { TestApp } from "./app.ts";
import { tempDir } from "./temp.ts";
import { until } from "./until.ts";

const PANES = join(import.meta.dir, "..", "fixtures", "panes");

/** A screen captured from the real CLI. */
export function pane(name: string): string {
  return readFileSync(join(PANES, `${name}.txt`), "utf8");
}

/** The idle screen with `input` in the live input box (`❯` + U+00A0). */
export function idleWithInput(input: string): string {
  return pane("01-idle-startup").replace(/^❯\u00a0.*$/m, `❯\u00a0${input}`);
}

export interface SimulationScript {
  /** What the input box shows after a paste (default: the placeholder the CLI shows). */
  afterPaste?: (text: string) => string;
  /** Called on each Enter with its number (1-based); return true to accept the prompt. */
  acceptEnter?: (n: number) => boolean;
  /** Send the prompt-submit hook on acceptance (false: the hook is lost). */
  hook?: boolean;
  /** How long after the accepting Enter the hook is sent (default at once). */
  hookDelayMs?: number;
  /** How long the UI takes to show its input box (default 5 ms); it draws a banner meanwhile. */
  bootMs?: number;
  /** What the agent records as the submitted prompt (default: the text as pasted). */
  recorded?: (text: string) => string;
  /**
   * Called on each paste with its number (1-based); true: the agent drops it — it hides its
   * input box for a moment and shows it again empty (Gemini CLI loading a resumed conversation).
   */
  dropPaste?: (n: number) => boolean;
}

/**
 * Plays the agent's part against the fake tmux, for every window the app opens: boots to the
 * idle screen, reacts to paste and Enter the way Claude Code does (input box, then the working
 * screen and the UserPromptSubmit hook), using screens captured from the real CLI.
 */
export function simulateAgents(app: TestApp, script: SimulationScript = {}) {
  const tmux: FakeTmux = app.tmux;
  const pasted = new Map<string, string>();
  let enters = 0;
  const sessionOf = (paneId: string) => app.repo.list().find((r) => r.paneId === paneId);
  const originalNewWindow = tmux.newWindow.bind(tmux);
  const originalPaste = tmux.paste.bind(tmux);
  const originalKeys = tmux.sendKeys.bind(tmux);
  // The test may have closed the window already.
  const open = (paneId: string) => app.repo.list().some((r) => r.paneId === paneId && r.status !== "killed");
  const boot = (paneId: string) => {
    const bootMs = script.bootMs ?? 5;
    for (let at = 1; at < bootMs; at += 25)
      setTimeout(
        () => open(paneId) && tmux.setScreen(paneId, `Claude Code is starting${".".repeat(at)}`),
        at,
      );
    setTimeout(() => open(paneId) && tmux.setScreen(paneId, pane("01-idle-startup")), bootMs);
  };
  const originalSplit = tmux.splitWindow.bind(tmux);
  tmux.newWindow = async (options) => {
    const created = await originalNewWindow(options);
    boot(created.paneId);
    return created;
  };
  tmux.splitWindow = async (windowId, options) => {
    const created = await originalSplit(windowId, options);
    boot(created.paneId);
    return created;
  };
  let pastes = 0;
  tmux.paste = async (paneId, text) => {
    await originalPaste(paneId, text);
    if (script.dropPaste?.(++pastes)) {
      tmux.setScreen(paneId, "Resuming session...");
      setTimeout(() => open(paneId) && tmux.setScreen(paneId, pane("01-idle-startup")), 30);
      return;
    }
    pasted.set(paneId, text);
    tmux.setScreen(
      paneId,
      idleWithInput(script.afterPaste?.(text) ?? `[Pasted text #1 +${text.split("\n").length - 1} lines]`),
    );
  };
  tmux.sendKeys = async (paneId, keys) => {
    await originalKeys(paneId, keys);
    const text = pasted.get(paneId);
    if (!keys.includes("Enter") || text === undefined) return;
    enters++;
    if (!(script.acceptEnter?.(enters) ?? true)) return;
    pasted.delete(paneId);
    tmux.setScreen(paneId, pane("04-working"));
    const session = sessionOf(paneId);
    if (session && script.hook !== false) {
      const prompt = script.recorded?.(text) ?? text;
      const submitted = () => hook(app, session.id, "UserPromptSubmit", { prompt, prompt_id: `p-${enters}` });
      if (script.hookDelayMs) setTimeout(submitted, script.hookDelayMs);
      else await submitted();
    }
  };
  return { enters: () => enters, pastes: () => pastes };
}

/** The captured dialog Claude Code draws for a permission request of this tool. */
const DIALOG_PANES: Record<string, string> = {
  Bash: "06-permission-bash",
  Write: "07-permission-write",
  Edit: "08-permission-edit",
  AskUserQuestion: "10-ask-question",
  ExitPlanMode: "14-plan-approval",
};

/** Posts a hook as the agent would, with the session's own secret, and nothing more. */
export function postHook(
  app: TestApp,
  sessionId: string,
  event: string,
  payload: Record<string, unknown> = {},
  secret?: string,
) {
  const record = app.repo.get(sessionId);
  // An agent never has ag's token: its hook secret is its only credential.
  return app.request("POST", `/v1/hooks/claude/${event}`, {
    body: { session_id: sessionId, hook_event_name: event, ...payload },
    headers: { "x-svc-hook-secret": secret ?? record?.hookSecret ?? "" },
    token: false,
  });
}

/**
 * Posts a hook as the agent would; a permission request is then drawn as its dialog on the
 * session's pane, as the agent does a moment after its hook.
 */
export async function hook(
  app: TestApp,
  sessionId: string,
  event: string,
  payload: Record<string, unknown> = {},
  secret?: string,
) {
  const response = await postHook(app, sessionId, event, payload, secret);
  const paneId = app.repo.get(sessionId)?.paneId;
  if (event === "PermissionRequest" && response.ok && paneId && app.tmux.hasPane(paneId)) {
    // A request the hook's answer decided (a policy's deny) is never drawn.
    const answer = (await response.clone().json()) as { hookSpecificOutput?: { decision?: unknown } };
    const dialog = answer.hookSpecificOutput?.decision ? null : dialogFor(payload);
    if (dialog) app.tmux.setScreen(paneId, dialog);
  }
  return response;
}

/** The screen of this request's dialog, if the agent draws one we captured (a question: with its own text). */
function dialogFor(payload: Record<string, unknown>): string | null {
  const tool = String(payload.tool_name);
  if (tool !== "AskUserQuestion") return pane(DIALOG_PANES[tool] ?? DIALOG_PANES.Bash!);
  const input = payload.tool_input as { questions?: { question?: string }[] } | undefined;
  const question = input?.questions?.[0]?.question;
  return question
    ? pane(DIALOG_PANES.AskUserQuestion!).replace("Which color should the button be?", question)
    : null;
}

/** Creates a session (POST /v1/sessions) in a fresh workDir and waits for its agent to be idle. */
export async function idleSession(app: TestApp, body: Record<string, unknown> = {}) {
  const response = await app.request("POST", "/v1/sessions", { body: { workDir: tempDir(), ...body } });
  const id = ((await response.json()) as { id: string }).id;
  await until(() => app.repo.get(id)?.status === "idle");
  return { id, paneId: app.repo.get(id)!.paneId! };
}
