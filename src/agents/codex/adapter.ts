import { join } from "node:path";
import type {
  AgentAdapter,
  AgentEnvironment,
  AgentObservation,
  KeyStep,
  PendingDialog,
  ScreenReading,
} from "../agent.ts";
import { hookTool } from "../claude/hooks.ts";
import { conversationFiles } from "../history.ts";
import { isCliProcess } from "../process.ts";
import { screenQuestion } from "../questions.ts";
import { commonScreenObservation } from "../screen-observation.ts";
import type { PendingPermission } from "../vocabulary.ts";
import { denyReply, HOOK_EVENTS, readHook, toolCategory } from "./hooks.ts";
import { CODEX_MODES, prepareCodexLaunch } from "./launch.ts";
import { CODEX_PRICES } from "./prices.ts";
import { createCodexTranscriptReader } from "./reader.ts";
import { type CodexScreen, classifyScreen, type StartDialog } from "./screen.ts";
import { codexTranscriptFormat } from "./transcript.ts";

/**
 * Codex CLI (pinned 0.169.0, verified on 0.171.0 too) behind the AgentAdapter seam. Its state
 * comes from its hooks first (a turn from UserPromptSubmit to Stop or Interrupt, approvals from
 * PermissionRequest), then its rollout file, then the screen (dialogs, API errors; a turn whose
 * answer streams shows no status).
 * Not offered: questions (Codex asks only in its Plan collaboration mode, which no launch flag
 * selects), and finding a conversation file without a hook (Codex names its threads itself).
 */
export function createCodexAdapter(env: AgentEnvironment): AgentAdapter {
  const adapter: AgentAdapter = {
    name: "codex",
    displayName: "Codex CLI",
    provider: "openai",
    cli: { command: "codex", package: "@openai/codex", versionFlag: "--version" },
    // 0.171.0 drives and reads as 0.169.0 does (docs/agents.md, "Codex CLI", Versions): one adapter.
    verifiedVersions: ["0.169.0", "0.171.0"],
    probeFlags: [
      "--no-daemon",
      "--dangerously-bypass-hook-trust",
      "--sandbox",
      "--ask-for-approval",
      "--dangerously-bypass-approvals-and-sandbox",
      "--approve-for-me",
      "-c",
    ],
    forVersion: () => adapter,
    drivers: ["tmux"],
    capabilities: ["hooks", "transcript", "resume", "fork", "policy"],
    permissionModes: CODEX_MODES,
    prices: CODEX_PRICES,
    isAgentProcess: isCodexProcess,
    hooks: { events: HOOK_EVENTS, read: readHook },
    prepareLaunch: (request) => prepareCodexLaunch(request, env),
    readScreen: (text, options) => readScreen(text, options, env.trustWorkdir),
    // Codex records the prompt as typed but for its ends, trimmed (measured with 0.169.0: tabs,
    // runs of spaces and blank lines inside are kept in its hook, rollout and request).
    isSubmission: (typed, recorded) => typed.trim() === recorded.trim(),
    // `!cmd` runs in the shell with no hook and no prompt line; `/commands` are Codex's own.
    recordsLate: (text) => /^[!/]/.test(text.trimStart()),
    transcript: {
      format: codexTranscriptFormat,
      find: async () => null,
      createReader: createCodexTranscriptReader,
      // The user's own Codex home (the launch never moves it): ~/.codex/sessions/YYYY/MM/DD/rollout-…
      history: () =>
        conversationFiles(
          join(env.home, ".codex", "sessions"),
          "**/rollout-*.jsonl",
          (path) =>
            /-([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\.jsonl$/i.exec(path)?.[1] ??
            null,
        ),
    },
    policy: {
      tool: (event, payload) => hookTool(event, payload, toolCategory),
      deny: denyReply,
    },
    keys: {
      // An approval takes one key at once ("1. Yes, proceed (y)"); Escape is "3. No, and tell
      // Codex what to do differently", which also interrupts the turn.
      approve: (pending) => (pending.kind === "trust" ? startDialog(pending).approve : ["y"]),
      reject: (pending) => (pending.kind === "trust" ? startDialog(pending).reject : ["Escape"]),
      answer: answerKeys,
      // Escape stops a turn. Never C-c: on an empty composer it quits Codex at once.
      interrupt: ["Escape"],
      escape: ["Escape"],
      submit: ["Enter"],
      // C-u empties the composer's line; Backspace joins the line above, for a multi-line input.
      clearInput: Array.from({ length: 12 }, () => ["C-u", "BSpace"]).flat(),
    },
  };
  return adapter;
}

/**
 * A question (request_user_input, Plan mode): the option's digit picks and submits it. Text of
 * one's own goes in the notes of the "None of the above" row after the options: Down to it, Tab,
 * the text, Enter.
 */
function answerKeys(pending: PendingPermission, answer: { option: number } | { text: string }): KeyStep[] {
  if ("option" in answer) return [{ keys: [String(answer.option)] }];
  const count = pending.options?.length ?? 2;
  return [
    ...Array.from({ length: count }, () => ({ keys: ["Down"] })),
    { keys: ["Tab"] },
    { text: answer.text },
    { keys: ["Enter"] },
  ];
}

/** Codex's start-up dialogs, each a `trust` prompt, and the keys of its "yes" and its "no". */
const START_DIALOGS: Record<StartDialog, { detail: string; approve: string[]; reject: string[] }> = {
  // "› 1. Trust and continue" is preselected. The other way out, Escape or C-c, leads to Codex's
  // task list (no composer); a second C-c there quits, as refusing quits Claude Code. (Escape
  // sent with another key in one call reads as Alt+key.)
  "folder-trust": { detail: "trust this folder?", approve: ["Enter"], reject: ["C-c", "C-c"] },
  // "2. Trust all and continue" / "3. Continue without trusting (hooks won't run)".
  "hooks-review": { detail: "trust the hooks that are new or changed?", approve: ["2"], reject: ["3"] },
  // "1. Try new model" / "2. Use existing model".
  "model-upgrade": { detail: "try the new model Codex offers?", approve: ["1"], reject: ["2"] },
  // "r retry" (once it is closed in the other app) / "^c/q exit". Its "f fork" is POST /fork.
  "thread-locked": {
    detail: "this conversation is open in another Codex, which must close it first: retry?",
    approve: ["r"],
    reject: ["q"],
  },
};

function startDialog(pending: PendingDialog) {
  return START_DIALOGS[pending.dialog as StartDialog] ?? START_DIALOGS["folder-trust"];
}

export function readScreen(
  text: string,
  options: { paneDead?: boolean; workDir?: string } = {},
  trustWorkdir = false,
): ScreenReading {
  const screen = classifyScreen(text, options);
  const reading: ScreenReading = {
    observation: toObservation(screen),
    input: screen.state === "idle" || screen.state === "working" ? screen.input : null,
    activityKey: activityKey(text),
  };
  // ag trusted the folder for this session (-c projects=…): a dialog about that folder is its to answer.
  if (trustWorkdir && screen.state === "start_dialog" && screen.dialog === "folder-trust") {
    if (options.workDir === undefined || screen.folder === options.workDir)
      return {
        ...reading,
        autoAnswer: { dialog: "folder-trust", keys: START_DIALOGS["folder-trust"].approve },
      };
  }
  return reading;
}

export function toObservation(screen: CodexScreen): AgentObservation {
  switch (screen.state) {
    case "permission":
      return { kind: "permission", request: { kind: "tool", tool: screen.tool, detail: screen.detail } };
    case "question": {
      const request = screenQuestion("request_user_input", screen.question, screen.options);
      return {
        kind: "permission",
        request: screen.questions > 1 ? { ...request, questions: screen.questions } : request,
      };
    }
    case "start_dialog":
      return {
        kind: "permission",
        request: { kind: "trust", detail: START_DIALOGS[screen.dialog].detail, dialog: screen.dialog },
      };
    default:
      return commonScreenObservation(screen, (error) => /\b429\b|rate limit|usage limit/i.test(error));
  }
}

/**
 * What the agent has produced, without what moves by itself (the status line's timer, blinking
 * bullets, the start-up logo) or what ag types (the composer and everything below it).
 */
function activityKey(text: string): string {
  const lines = text.split("\n");
  const composer = lines.findLastIndex((l) => /^(?:› |!(?: |$))/.test(l));
  return (composer === -1 ? lines : lines.slice(0, composer))
    .filter((l) => !/esc to interrupt\)\s*$/.test(l) && !/[\u2800-\u28ff]/.test(l))
    .map((l) => l.replace(/^◦ /, "• "))
    .join("\n");
}

/**
 * Codex runs as its native binary (`codex`, from the platform package) or as node with the npm
 * package's launcher (bin/codex.js), which stays its parent; a shell that mentions it is neither.
 */
export function isCodexProcess(argv: readonly string[]): boolean {
  return isCliProcess(argv, "codex", /@openai\/codex\/bin\/codex\.js$/);
}
