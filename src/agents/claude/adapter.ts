import { basename, join } from "node:path";
import type { AgentAdapter, AgentObservation, ScreenReading } from "../agent.ts";
import { conversationFiles } from "../history.ts";
import { isCliProcess } from "../process.ts";
import { questionAnswerKeys } from "../question-keys.ts";
import { screenQuestion } from "../questions.ts";
import { commonScreenObservation } from "../screen-observation.ts";
import { PERMISSION_MODES } from "../vocabulary.ts";
import { claudeAcp } from "./acp.ts";
import { HOOK_EVENTS, hookTool, readHook } from "./hooks.ts";
import { type ClaudeEnvironment, claudeDataDir, prepareClaudeLaunch } from "./launch.ts";
import { CLAUDE_PRICES } from "./prices.ts";
import { createClaudeTranscriptReader } from "./reader.ts";
import { conversationAt } from "./rewind.ts";
import {
  classifyScreen,
  INPUT_BOX,
  SCREEN_2_1_197,
  type ScreenDialect,
  type ScreenState,
  type StartDialogId,
} from "./screen.ts";
import { denyReply, toolCategory } from "./tools.ts";
import { claudeTranscriptFormat } from "./transcript.ts";
import { findTranscript } from "./transcript-files.ts";
import { CLAUDE_VERIFIED_VERSIONS, type ClaudeDialect, claudeDialect, unframePastes } from "./versions.ts";

/** The spinner line ("✻ Whirring… (3s · ↓ 24 tokens)") changes every frame without meaning anything. */
const SPINNER = /^[^\sA-Za-z0-9] [A-Z][\w' -]*?…/;

/**
 * Claude Code behind the AgentAdapter seam (verified on CLAUDE_VERIFIED_VERSIONS); headless
 * through claude-code-acp. The plain adapter reads as 2.1.197 does; `forVersion` gives the one of
 * the version a session launched (versions.ts: what differs).
 */
export function createClaudeAdapter(env: ClaudeEnvironment): AgentAdapter {
  const byDialect = new Map<ClaudeDialect, AgentAdapter>();
  const forDialect = (dialect: ClaudeDialect): AgentAdapter => {
    let adapter = byDialect.get(dialect);
    if (!adapter) {
      adapter = claudeAdapter(env, dialect, (version) => forDialect(claudeDialect(version)));
      byDialect.set(dialect, adapter);
    }
    return adapter;
  };
  return forDialect(claudeDialect(CLAUDE_VERIFIED_VERSIONS[0]));
}

function claudeAdapter(
  env: ClaudeEnvironment,
  dialect: ClaudeDialect,
  forVersion: (version: string | null) => AgentAdapter,
): AgentAdapter {
  const adapter: AgentAdapter = {
    name: "claude",
    displayName: "Claude Code",
    provider: "anthropic",
    cli: { command: "claude", package: "@anthropic-ai/claude-code", versionFlag: "--version" },
    verifiedVersions: CLAUDE_VERIFIED_VERSIONS,
    probeFlags: ["--session-id", "--settings", "--permission-mode", "--resume", "--fork-session"],
    forVersion,
    drivers: ["tmux", "acp"],
    acp: claudeAcp(env),
    capabilities: ["hooks", "transcript", "resume", "fork", "questions", "policy"],
    permissionModes: PERMISSION_MODES,
    prices: CLAUDE_PRICES,
    isAgentProcess: isClaudeProcess,
    hooks: { events: HOOK_EVENTS, read: readHook },
    prepareLaunch: (request) => prepareClaudeLaunch(request, env),
    readScreen: (text, options) =>
      readScreen(text, { ...options, dialect: dialect.screen }, env.trustWorkdir),
    isSubmission: (typed, recorded) =>
      isSubmission(typed, dialect.framesPastes ? unframePastes(recorded) : recorded),
    // `!cmd` is written down when it has run; built-in `/commands` only once their dialog closes.
    recordsLate: (text) => /^[!/]/.test(text.trimStart()),
    transcript: {
      format: claudeTranscriptFormat,
      find: (workDir, sessionId) => findTranscript(claudeDataDir(env), sessionId, workDir),
      createReader: createClaudeTranscriptReader,
      history: () =>
        conversationFiles(join(claudeDataDir(env), "projects"), "*/*.jsonl", (path) =>
          basename(path, ".jsonl"),
        ),
      conversationAt,
    },
    policy: {
      tool: (event, payload) => hookTool(event, payload, toolCategory),
      deny: denyReply,
    },
    keys: {
      // Option 1 ("Yes") is preselected in tool dialogs; for a plan, option 2 keeps the
      // session's permission mode ("Yes, manually approve edits"): its digit, one key that picks
      // and confirms (Down then Enter could lose the Down and confirm "Yes, and use auto mode").
      // Escape declines. The start-up dialogs' keys are the version's (dialogKeys).
      approve: (pending) =>
        pending.kind === "trust"
          ? startDialogKeys(pending.dialog, dialect.screen).approve
          : pending.kind === "plan"
            ? ["2"]
            : ["Enter"],
      reject: (pending) =>
        pending.kind === "trust" ? startDialogKeys(pending.dialog, dialect.screen).reject : ["Escape"],
      // AskUserQuestion's own row after the options is "Type something.".
      answer: questionAnswerKeys,
      interrupt: ["C-c"],
      escape: ["Escape"],
      submit: ["Enter"],
      clearInput: ["C-u"],
      dialogSettleMs: dialect.dialogSettleMs,
    },
  };
  return adapter;
}

/**
 * Claude Code turns each tab of a prompt into four spaces and trims its end (measured with
 * 2.1.197 and 2.1.328): its hook, transcript and request all carry that. So the comparison is of
 * the words: runs of whitespace count as one space, and the ends do not count. (2.1.328's paste
 * frame is taken off before: the text inside it is what ag typed.)
 */
function isSubmission(typed: string, recorded: string): boolean {
  const words = (text: string) => text.replace(/\s+/g, " ").trim();
  return words(typed) === words(recorded);
}

type StartDialogScreen = "trust_dialog" | "api_key_dialog" | "bypass_dialog";

/**
 * Claude Code's start-up dialogs, each a `trust` prompt: the id ag reports as
 * `pendingPermission.dialog`. The keys that pick its "yes" and its "no" are the version's
 * (ScreenDialect.dialogKeys): each dialog preselects a different option, and the versions differ in
 * order and numbering.
 */
const START_DIALOGS: Record<StartDialogScreen, { dialog: StartDialogId; detail: string }> = {
  trust_dialog: { dialog: "folder-trust", detail: "trust this folder?" },
  api_key_dialog: { dialog: "api-key", detail: "use the API key found in the environment?" },
  bypass_dialog: { dialog: "bypass-permissions", detail: "accept bypass-permissions mode?" },
};

/**
 * The keys of the start-up dialog a pending `trust` prompt names. One without a dialog id
 * (recorded by an older ag) is taken for the folder-trust dialog, whose keys `trust` prompts
 * always had.
 */
function startDialogKeys(dialog: string | undefined, screen: ScreenDialect) {
  const known = Object.values(START_DIALOGS).find((d) => d.dialog === dialog);
  return screen.dialogKeys[known?.dialog ?? "folder-trust"];
}

/**
 * `trustWorkdir`: ag meant the workDir to be trusted, so the folder-trust dialog is ag's to
 * answer. It can still show: another Claude Code process of the same HOME may write its copy of
 * ~/.claude.json over the entry ag just wrote (a read-modify-write race, reproduced with 2.1.197).
 * Only that dialog: the API-key and bypass-permissions dialogs always go to the user.
 */
export function readScreen(
  text: string,
  options: { paneDead?: boolean; workDir?: string; dialect?: ScreenDialect } = {},
  trustWorkdir = false,
): ScreenReading {
  const screen = classifyScreen(text, options);
  const reading = {
    observation: toObservation(screen),
    input: inputOf(screen),
    activityKey: activityKey(text),
  };
  if (!trustWorkdir || screen.state !== "trust_dialog") return reading;
  // Only the folder ag trusted for this session: a dialog about any other goes to the user.
  if (options.workDir !== undefined && trustDialogFolder(text) !== options.workDir) return reading;
  const { dialog } = START_DIALOGS.trust_dialog;
  const { approve } = startDialogKeys(dialog, options.dialect ?? SCREEN_2_1_197);
  return { ...reading, autoAnswer: { dialog, keys: approve } };
}

function inputOf(screen: ScreenState): string | null {
  return screen.state === "idle" || screen.state === "working" ? screen.input : null;
}

/** The state-fusion reading of a classified screen. */
export function toObservation(screen: ScreenState): AgentObservation {
  switch (screen.state) {
    case "permission":
      return {
        kind: "permission",
        request: {
          kind: "tool",
          tool: screen.tool === "other" ? screen.title : screen.tool,
          detail: screen.detail,
        },
      };
    case "ask_question": {
      return {
        kind: "permission",
        request: screenQuestion("AskUserQuestion", screen.question, screen.options),
      };
    }
    case "plan_approval":
      return {
        kind: "permission",
        request: { kind: "plan", tool: "ExitPlanMode", detail: "the agent proposes a plan" },
      };
    case "trust_dialog":
    case "api_key_dialog":
    case "bypass_dialog": {
      const { dialog, detail } = START_DIALOGS[screen.state];
      return { kind: "permission", request: { kind: "trust", detail, dialog } };
    }
    default:
      return commonScreenObservation(screen, (error) => /\b429\b|rate limit/i.test(error));
  }
}

/**
 * What the agent has produced, without the parts that move by themselves (spinner, timers)
 * or that ag types (the input box and its footer): a change here is agent activity.
 */
function activityKey(text: string): string {
  const lines = text.split("\n");
  const box = lines.findLastIndex((l) => INPUT_BOX.test(l));
  const body = box === -1 ? lines : lines.slice(0, box);
  return body.filter((l) => !SPINNER.test(l)).join("\n");
}

/**
 * Claude Code runs as its native binary (`claude`, or the platform package's) or as node with
 * the npm package's cli.js; a shell that merely mentions it is not one.
 */
export function isClaudeProcess(argv: readonly string[]): boolean {
  return isCliProcess(argv, "claude", /@anthropic-ai\/claude-code\//);
}

/** The folder a folder-trust dialog asks about: the line after "Accessing workspace:". */
export function trustDialogFolder(text: string): string | null {
  const lines = text.split("\n").map((line) => line.trim());
  const at = lines.indexOf("Accessing workspace:");
  if (at < 0) return null;
  return lines.slice(at + 1).find((line) => line !== "") ?? null;
}
