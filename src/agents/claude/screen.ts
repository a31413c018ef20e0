/**
 * Reads a `tmux capture-pane -p` screen of Claude Code (verified 2.1.197 and 2.1.328; strings
 * change between releases, so every pattern here is tested against panes captured from the real
 * CLI, and what differs between versions is a `ScreenDialect` chosen from the version ag read at
 * launch).
 *
 * The key fact: the live input box is the line that starts with "❯" + a NO-BREAK SPACE (U+00A0)
 * ("!" + U+00A0 in shell mode, once the text starts with "!"). Echoed past prompts and the cursor
 * of dialog menus use "❯" + an ordinary space (a shell command's echo: "!" + a space). While a dialog
 * is open there is no input box on the screen; after exit the last frame (input box included)
 * stays, followed by the resume hint.
 */

export type ScreenMode = "default" | "acceptEdits" | "plan" | "auto" | "bypassPermissions" | "dontAsk";
export type PermissionTool = "Bash" | "Write" | "Edit" | "other";

/** What the input area shows: the footer's permission mode and the box's text. */
export interface InputArea {
  mode: ScreenMode;
  /** The input box's text, trimmed (wrapped or multi-line input joined with "\n"). */
  input: string;
  /** The box holds a `[Pasted text #N +L lines]` placeholder. */
  pasted: boolean;
}

export interface IdleScreen extends InputArea {
  state: "idle";
  /** The last turn ended with "Interrupted · What should Claude do instead?". */
  interrupted: boolean;
  /** The last turn's "● API Error: …" text, continuation lines joined; null when none. */
  apiError: string | null;
  /** The footer says "Press Ctrl-C again to exit" (a second Ctrl+C within ~2 s exits). */
  ctrlCPending: boolean;
}

export interface WorkingScreen extends InputArea {
  state: "working";
  /** "✻ API error · Retrying in 1s · attempt 1/2": the request failed and will be retried. */
  retrying: boolean;
  /** The spinner's verb ("Whirring"), null when only the footer says it works. */
  spinnerVerb: string | null;
  /** Seconds on the spinner's timer, when it shows one. */
  seconds: number | null;
}

export interface PermissionScreen {
  state: "permission";
  tool: PermissionTool;
  /** The dialog's title ("Bash command", "Create file", "Edit file", "Fetch", …). */
  title: string;
  /** The Bash command's first line, the file path, else the first line under the title. */
  detail: string;
  /** "Do you want to proceed?", "Do you want to create hello.txt?", … */
  question: string;
}

export interface QuestionScreen {
  state: "ask_question";
  /** The question's short header ("☐ Color"). */
  header: string | null;
  question: string | null;
  /** The agent's options as numbered on screen (the dialog's own rows left out). */
  options: Array<{ index: number; label: string }>;
}

export interface ExitedScreen {
  state: "exited";
  /** From "claude --resume <id>". */
  resumeId: string | null;
  /** From tmux's "Pane is dead (status N, …)" (remain-on-exit); null when not shown. */
  exitStatus: number | null;
}

export interface OtherScreen {
  state: "plan_approval" | "trust_dialog" | "api_key_dialog" | "bypass_dialog" | "starting";
}

export type ScreenState =
  | IdleScreen
  | WorkingScreen
  | PermissionScreen
  | QuestionScreen
  | ExitedScreen
  | OtherScreen;
export type ScreenStateName = ScreenState["state"];

/**
 * What differs between Claude Code versions on screen. The adapter picks one from the version
 * the session's launch read (versions.ts); a screen is never used to guess the version.
 */
export interface ScreenDialect {
  /**
   * Where a Bash permission dialog shows the command: on the line under its title (2.1.197), or
   * between two dashed rules, below a "Tip: …" line and the command's description (2.1.328).
   */
  bashCommand: "under-title" | "between-rules";
  /** The line of a request that failed and will be retried. */
  retrying: RegExp;
  /** What the last step of a dialog of several questions asks, above its Submit and Cancel rows. */
  review: string;
  /** Hints an empty input box shows (dimmed; a plain capture cannot tell them from typed text). */
  placeholder: RegExp | null;
  /**
   * The keys that pick "yes" and "no" in each start-up dialog. The options' order differs between
   * versions ("1. Yes, I trust this folder" preselected in 2.1.197; "No, exit" first and
   * preselected in 2.1.328, where Enter alone quits the agent), and so does their numbering:
   * 2.1.197 numbers them, and a digit picks its option and confirms in one key. Where it can, an
   * answer is that one key: two keys (an arrow, then Enter) can lose the first to a dialog not yet
   * taking keys, and the Enter then confirms the preselected option, the opposite answer (seen on
   * 2.1.197's API-key dialog under load: approve recorded the key as rejected).
   */
  dialogKeys: Record<StartDialogId, { approve: string[]; reject: string[] }>;
}

/** Claude Code's start-up dialogs, as ag names them in `pendingPermission.dialog`. */
export type StartDialogId = "folder-trust" | "api-key" | "bypass-permissions";

/** 2.1.197: "✻ API error · Retrying in 1s · attempt 1/2". */
export const SCREEN_2_1_197: ScreenDialect = {
  bashCommand: "under-title",
  retrying: /Retrying in \d+s · attempt \d+\/\d+/,
  review: "Ready to submit your answers?",
  placeholder: null,
  dialogKeys: {
    // "1. Yes, I trust this folder" is preselected; Escape cancels: the agent exits, as with "2. No, exit".
    "folder-trust": { approve: ["Enter"], reject: ["Escape"] },
    // "1. Yes", "2. No (recommended)"
    "api-key": { approve: ["1"], reject: ["2"] },
    // "1. No, exit", "2. Yes, I accept"
    "bypass-permissions": { approve: ["2"], reject: ["1"] },
  },
};

/** 2.1.328: "✻ 429 <message> · retrying in 2s · attempt 4/10"; the command between dashed rules. */
export const SCREEN_2_1_328: ScreenDialect = {
  bashCommand: "between-rules",
  retrying: /[Rr]etrying in \d+s · attempt \d+\/\d+/,
  review: "Review your answers",
  // After an API error the empty box reads "Resend your message to try again".
  placeholder: /^Resend your message to try again$/,
  // Options without numbers: an arrow, then Enter, after the dialog's settle time (versions.ts).
  dialogKeys: {
    "folder-trust": { approve: ["Down", "Enter"], reject: ["Escape"] },
    // "No (recommended)" is preselected; "Yes" is the one above.
    "api-key": { approve: ["Up", "Enter"], reject: ["Enter"] },
    // "No, exit" is preselected (Enter alone quits the agent); "Yes, I accept" is below.
    "bypass-permissions": { approve: ["Down", "Enter"], reject: ["Enter"] },
  },
};

/** The live input box: "❯" + U+00A0, or "!" + U+00A0 in shell mode. Exported for the adapter. */
export const INPUT_BOX = /^[❯!]\u00a0/;
const RULE = /^─{10,}/;
const EXITED = /^Resume this session with:|^Pane is dead/;

/** First-run and approval dialogs, in the order they are tested (they replace the input box). */
const DIALOGS: ReadonlyArray<[OtherScreen["state"], RegExp]> = [
  ["trust_dialog", /Is this a project you created or one you trust\?|Yes, I trust this folder/],
  ["api_key_dialog", /Detected a custom API key in your environment/],
  ["bypass_dialog", /running in Bypass Permissions mode[\s\S]*Yes, I accept/],
  ["plan_approval", /Would you like to proceed\?|^ Exit plan mode\?/m],
];
/** One question ("↑/↓ to navigate"), or several in tabs ("Tab/Arrow keys to navigate"). */
const ASK_QUESTION = /Enter to select · (?:↑\/↓|Tab\/Arrow keys) to navigate/;
/** The tabs of a dialog with several questions: "←  ☐ Color  ☒ Size  ✔ Submit  →". */
const QUESTION_TABS = /^←\s.*[☐☒].*→\s*$/;
const PERMISSION_QUESTION =
  /^ *(Do you want to (?:proceed|create|make this edit|overwrite|delete|allow)[^?\n]*\?)/m;
const PERMISSION_TOOLS: Record<string, PermissionTool> = {
  "Bash command": "Bash",
  "Create file": "Write",
  "Overwrite file": "Write",
  "Write file": "Write",
  "Edit file": "Edit",
};

/** "✻ Razzmatazzing… (3s · ↓ 24 tokens)", "● Cogitating… (1m 5s · …)" (reduced motion). Finished
 * turns read "✻ Cooked for 3s" (no ellipsis), so they do not match. A verb may hold letters
 * beyond ASCII: "Flambéing" and "Sautéing" are in the CLI's list (2.1.197). */
const SPINNER = /^[^\sA-Za-z0-9] (\p{Lu}[\p{L}\p{M}\d_' -]*?)…(?: \((?:(\d+)m )?(\d+)s\b[^)]*\))?\s*$/u;
const INTERRUPTED = /Interrupted · What should Claude do instead\?/;
const API_ERROR = /^● API Error: (.*)$/;
const PASTED = /\[Pasted text #\d+(?: \+\d+ lines)?\]/;
const MODES: ReadonlyArray<[ScreenMode, RegExp]> = [
  // 2.1.328 names the default mode ("⏸ manual mode on"); 2.1.197 shows nothing for it.
  ["default", /⏸ manual mode on/],
  ["plan", /⏸ plan mode on/],
  ["acceptEdits", /⏵⏵ accept edits on/],
  ["auto", /⏵⏵ auto mode on/],
  ["bypassPermissions", /⏵⏵ bypass permissions on/],
  ["dontAsk", /⏵⏵ don't ask on/],
];

export function classifyScreen(
  text: string,
  options: { paneDead?: boolean; dialect?: ScreenDialect } = {},
): ScreenState {
  const dialect = options.dialect ?? SCREEN_2_1_197;
  const lines = screenLines(text);
  const box = lines.findLastIndex((l) => INPUT_BOX.test(l));
  const exitAt = lines.findLastIndex((l) => EXITED.test(l));
  if (options.paneDead || exitAt > box) return readExit(lines.join("\n"));
  if (box === -1) return readDialog(lines, dialect);

  // The box is framed by two rules; the footer (mode, hints) is below the second one.
  const below = lines.slice(box + 1);
  const rule = below.findIndex((l) => RULE.test(l));
  const footer = (rule === -1 ? below : below.slice(rule + 1)).join("\n");
  const turn = lastTurn(lines.slice(0, box));
  const shown = boxText(lines, box);
  const input = dialect.placeholder?.test(shown) ? "" : shown;
  const area: InputArea = {
    mode: MODES.find(([, re]) => re.test(footer))?.[0] ?? "default",
    input,
    pasted: PASTED.test(input),
  };

  // "esc to interrupt" can be hidden by transient footer hints ("paste again to expand",
  // "Press Ctrl-C again to exit"), so the spinner or retry line above the box counts too.
  const status = statusLine(turn);
  const spinner = status.match(SPINNER);
  const retrying = dialect.retrying.test(status);
  if (/esc to interrupt/.test(footer) || spinner || retrying) {
    const seconds = spinner?.[3] ? Number(spinner[2] ?? 0) * 60 + Number(spinner[3]) : null;
    return { state: "working", ...area, retrying, spinnerVerb: spinner?.[1] ?? null, seconds };
  }
  return {
    state: "idle",
    ...area,
    interrupted: turn.some((l) => INTERRUPTED.test(l)),
    apiError: apiError(turn),
    ctrlCPending: /Press Ctrl-C again to exit/.test(footer),
  };
}

/** The live input box's text (see InputArea.input), or null when no input box is shown. */
export function inputBoxText(text: string): string | null {
  const lines = screenLines(text);
  const box = lines.findLastIndex((l) => INPUT_BOX.test(l));
  return box === -1 ? null : boxText(lines, box);
}

/** An input box is shown and holds nothing. */
export function isInputEmpty(text: string): boolean {
  return inputBoxText(text) === "";
}

function screenLines(text: string): string[] {
  // `capture-pane -e` output reads the same once its escapes are gone.
  const plain = text.includes("\x1b") ? Bun.stripANSI(text) : text;
  return plain.replace(/\s+$/, "").split("\n");
}

/** The box runs from the "❯\u00a0" line to the rule below it; wrapped lines are indented by 2. */
function boxText(lines: string[], box: number): string {
  const parts = [lines[box]!.replace(INPUT_BOX, "")];
  for (let i = box + 1; i < lines.length && !RULE.test(lines[i]!); i++)
    parts.push(lines[i]!.replace(/^ {2}/, ""));
  return parts
    .map((l) => l.trimEnd())
    .join("\n")
    .trim();
}

/** The lines after the last echoed prompt ("❯ " or a shell command's "! "): the current or last turn. */
function lastTurn(above: string[]): string[] {
  const prompt = above.findLastIndex((l) => l.startsWith("❯ ") || l.startsWith("! "));
  return above.slice(prompt + 1);
}

/** The last unindented line of the turn: where the spinner, retry and "Cooked for" lines sit. */
function statusLine(turn: string[]): string {
  return turn.findLast((l) => l.trim() !== "" && !/^\s/.test(l) && !RULE.test(l)) ?? "";
}

function apiError(turn: string[]): string | null {
  const at = turn.findLastIndex((l) => API_ERROR.test(l));
  if (at === -1) return null;
  const parts = [turn[at]!.match(API_ERROR)![1]!.trim()];
  // Long messages wrap onto lines indented by two spaces.
  for (let i = at + 1; i < turn.length && /^ {2}\S/.test(turn[i]!) && !/^ {2}⎿/.test(turn[i]!); i++) {
    parts.push(turn[i]!.trim());
  }
  return parts.join(" ");
}

function readExit(screen: string): ExitedScreen {
  const status = screen.match(/Pane is dead \(status (\d+)/);
  return {
    state: "exited",
    // "claude --resume <id>" (2.1.197), "claude --permission-mode default --resume <id>" (2.1.328).
    resumeId: screen.match(/^claude\b.* --resume (\S+)/m)?.[1] ?? null,
    exitStatus: status ? Number(status[1]) : null,
  };
}

function readDialog(lines: string[], dialect: ScreenDialect): ScreenState {
  const screen = lines.join("\n");
  for (const [state, re] of DIALOGS) if (re.test(screen)) return { state };
  // The review step of a dialog of several questions has no footer: its tabs say what it is.
  if (ASK_QUESTION.test(screen) || lines.some((l) => QUESTION_TABS.test(l)))
    return readQuestion(lines, dialect);
  const question = screen.match(PERMISSION_QUESTION);
  return question ? readPermission(lines, question[1]!, dialect) : { state: "starting" };
}

/** "❯ 1. Red", "  2. Blue", "  1. [ ] Logging" (multi-select): an option row of a question. */
const OPTION = /^\s*(?:❯\s*)?(\d+)\.\s+(?:\[[ ✔]\]\s+)?(.+?)\s*$/;
/** Rows the dialog adds after the agent's options. */
const OWN_ROWS = /^(Type something\.?|Chat about this|Submit)$/;

function readQuestion(lines: string[], dialect: ScreenDialect): QuestionScreen {
  const tabs = lines.findLastIndex((l) => QUESTION_TABS.test(l));
  const at = tabs !== -1 ? tabs : lines.findLastIndex((l) => /^ ?☐ /.test(l));
  if (at === -1) return { state: "ask_question", header: null, question: null, options: [] };
  const below = lines.slice(at + 1);
  // The review step asks one thing of its own (submit or cancel) under the answers given.
  const review = below.findIndex((l) => l.trim() === dialect.review);
  const asked = review !== -1 ? review : below.findIndex((l) => l.trim() !== "");
  const options = below
    .slice(asked + 1)
    .map((l) => l.match(OPTION))
    .filter((m): m is RegExpMatchArray => m !== null && !OWN_ROWS.test(m[2]!))
    .map((m) => ({ index: Number(m[1]), label: m[2]! }));
  return {
    state: "ask_question",
    header: tabs !== -1 ? null : lines[at]!.replace(/^ ?☐ /, "").trim(),
    question: below[asked]?.trim() ?? null,
    options,
  };
}

/**
 * A permission dialog sits below a rule: its title (" Bash command"), what it is about (the
 * command, or the file name followed by a dashed preview), then the question and the options.
 * 2.1.328 puts a "Tip: …" line and the command's description under the title, and the command
 * between two dashed rules (the dialect says which).
 */
function readPermission(lines: string[], question: string, dialect: ScreenDialect): PermissionScreen {
  const asked = lines.findLastIndex((l) => l.includes(question));
  const top = lines.slice(0, asked).findLastIndex((l) => RULE.test(l));
  const body = lines.slice(top + 1, asked).map((l) => l.trim());
  const title = body.find((l) => l !== "") ?? "";
  const tool = PERMISSION_TOOLS[title] ?? "other";
  const file = question.match(/^Do you want to (?:create|make this edit to|overwrite|delete) (.+)\?$/)?.[1];
  const tips = dialect.bashCommand === "between-rules" ? /^Tip: / : null;
  const under = body.slice(body.indexOf(title) + 1).filter((l) => !tips?.test(l));
  const firstLine = under.find((l) => l !== "" && !DASHED.test(l));
  const ruled = under.findIndex((l) => DASHED.test(l));
  const between = ruled === -1 ? undefined : under.slice(ruled + 1).find((l) => l !== "" && !DASHED.test(l));
  const command = dialect.bashCommand === "between-rules" ? (between ?? firstLine) : firstLine;
  const detail = tool !== "Bash" && file ? file : ((tool === "Bash" ? command : firstLine) ?? "");
  return { state: "permission", tool, title, detail, question };
}

/** The dashed rules around a dialog's preview or command ("╌╌╌…"). */
const DASHED = /^╌+$/;
