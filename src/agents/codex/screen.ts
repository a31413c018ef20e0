/**
 * Reads a `tmux capture-pane -p` screen of Codex CLI (0.169.0 and 0.171.0 draw alike; every
 * pattern is tested against panes captured from the real CLI, tests/fixtures/agents/codex/).
 *
 * The screen, top to bottom: past turns (`› prompt`, `• answer`, `  Worked for 2s • 17:19` at a
 * turn's end, `■ …` when it was interrupted or failed), the live status (`• Working (4s • esc to
 * interrupt)`), the composer (`› ` + the input, or a dim placeholder; `! ` + a command in shell
 * mode), a status line and a footer. A dialog (approval, question, start-up) takes the composer's place and ends the screen
 * with its own key hints. While the answer's text streams there is no status line at all: only
 * a prompt with no turn end after it tells that the turn still runs.
 */

/** An idle or working screen: the composer shows, and what the last turn came to. */
export type ComposerScreen = ComposerFields & ({ state: "idle" } | { state: "working" });

interface ComposerFields {
  /** The composer's first line, "" when it shows a placeholder. */
  input: string;
  /** The last turn ended with "■ Conversation interrupted". */
  interrupted: boolean;
  /** The last turn's "■ <error>" (continuation lines joined), null when none. */
  apiError: string | null;
  /** "Reconnecting... 2/5" or "Server is busy": the request failed and is retried. */
  retrying: boolean;
}

export interface PermissionScreen {
  state: "permission";
  /** What the approval hook calls the tool: Bash for commands, apply_patch for edits. */
  tool: string;
  /** The command, the file, else the dialog's question. */
  detail: string;
}

export interface QuestionScreen {
  state: "question";
  question: string | null;
  options: Array<{ index: number; label: string; description?: string }>;
  /** "Question 1/2": how many the dialog asks. */
  questions: number;
}

/**
 * Codex's dialogs before its composer. `thread-locked`: a resumed conversation another Codex
 * (a TUI, the app-server daemon, an IDE) is writing: Codex lets one writer at a time and shows
 * "This conversation is open in another app" until it is closed there (r retries).
 */
export type StartDialog = "folder-trust" | "hooks-review" | "model-upgrade" | "thread-locked";

export interface StartDialogScreen {
  state: "start_dialog";
  dialog: StartDialog;
  /** The folder a folder-trust dialog asks about. */
  folder: string | null;
}

export interface ExitedScreen {
  state: "exited";
  /** From "codex resume <id>". */
  resumeId: string | null;
  /** From tmux's "Pane is dead (status N, …)"; null when not shown. */
  exitStatus: number | null;
}

export type CodexScreen =
  | ComposerScreen
  | PermissionScreen
  | QuestionScreen
  | StartDialogScreen
  | ExitedScreen
  | { state: "starting" };

/** The composer and past prompts both start with "› " (U+203A); the composer is the last. */
const PROMPT = /^› /;
/** The composer in shell mode (the input began with "!"): "! " + the command, or "!" alone. */
const SHELL = /^!(?: |$)/;
const COMPOSER = (line: string) => PROMPT.test(line) || SHELL.test(line);
const HEADER = /^\s*>_ OpenAI Codex \(v/;
const EXITED = /^To continue this session, run:|^Pane is dead/;
/** A turn's end: "Worked for 2s • 17:19" (or "<1s"), or a "■ " line (interrupted, failed). */
const WORKED = /^ {2}Worked for (?:<?\d|\d+m)/;
const ENDED = /^■ /;
const INTERRUPTED = /^■ Conversation interrupted/;
const AGENT_LINE = /^[•◦] /;
/** The live status while a request runs: "• Working (4s • esc to interrupt)", retries too. */
const STATUS = /^[•◦] (.+?) \([^()]*\besc to interrupt\)\s*$/;
const RETRYING = /^Reconnecting|^Server is busy/;
/** Placeholders of the empty composer (dim on screen, plain text in a capture). */
const PLACEHOLDERS = new Set([
  "Ask Codex to do anything",
  "Ask a follow-up question",
  "Write a prompt or slash command",
]);
/** The footer of an empty composer. */
const EMPTY_FOOTER = /\? for shortcuts/;

/** Each dialog ends the screen with its key hints: the last line says which one is open. */
const APPROVAL_HINTS = /^\s*Press enter to confirm or esc to cancel\s*$/;
const QUESTION_HINTS = /enter to submit (?:answer|all)|esc to interrupt\s*$/;
const START_DIALOGS: ReadonlyArray<[StartDialog, RegExp, RegExp]> = [
  ["folder-trust", /Trust this folder\?/, /enter continue/],
  ["hooks-review", /Hooks need review/, /enter confirm/],
  ["model-upgrade", /Use existing model/, /enter\/esc confirm/],
  // Above it the conversation so far, whose last prompt would read as a composer.
  ["thread-locked", /This conversation is open in another app/, /\br retry\b.*\bq exit\b/],
];

export function classifyScreen(text: string, options: { paneDead?: boolean } = {}): CodexScreen {
  const lines = screenLines(text);
  const last = lines.findLast((l) => l.trim() !== "") ?? "";
  const composer = lines.findLastIndex(COMPOSER);
  const exitAt = lines.findLastIndex((l) => EXITED.test(l));
  if (options.paneDead || exitAt > composer) return readExit(lines.join("\n"));
  if (APPROVAL_HINTS.test(last)) return readApproval(lines);
  if (QUESTION_HINTS.test(last) && lines.some((l) => /^\s*Question \d+\/\d+/.test(l)))
    return readQuestion(lines);
  for (const [dialog, body, hints] of START_DIALOGS) {
    if (hints.test(last) && lines.some((l) => body.test(l))) return readStartDialog(lines, dialog);
  }
  if (composer === -1) return { state: "starting" };
  return readComposer(lines, composer);
}

function screenLines(text: string): string[] {
  // `capture-pane -e` output reads the same once its escapes are gone.
  const plain = text.includes("\x1b") ? Bun.stripANSI(text) : text;
  return plain.replace(/\s+$/, "").split("\n");
}

function readComposer(lines: string[], composer: number): ComposerScreen {
  const line = lines[composer]!;
  const typed = line.replace(PROMPT, "").trim();
  const footer = lines.slice(composer + 1).join("\n");
  // Shell mode is never empty: a prompt pasted into it would run as a command (it is cleared).
  const input = SHELL.test(line)
    ? `!${line.slice(1).trim()}`
    : PLACEHOLDERS.has(typed) || EMPTY_FOOTER.test(footer)
      ? ""
      : typed;
  const above = lines.slice(0, composer);
  const status = above.findLast((l) => STATUS.test(l))?.match(STATUS)?.[1] ?? null;
  const echo = above.findLastIndex((l) => PROMPT.test(l));
  const end = above.findLastIndex((l) => WORKED.test(l) || ENDED.test(l));
  const endLine = end === -1 ? "" : above[end]!;
  const failed = end > echo && ENDED.test(endLine) && !INTERRUPTED.test(endLine);
  const base = {
    input,
    interrupted: end > echo && INTERRUPTED.test(endLine),
    apiError: failed ? errorText(above, end) : null,
    retrying: status !== null && RETRYING.test(status),
  };
  return { state: status !== null || turnOpen(above, echo, end) ? "working" : "idle", ...base };
}

/**
 * A prompt with no end after it: its turn runs (the answer may be streaming, with no status
 * line). When the prompt has scrolled off (the header too) and no end shows, the agent's lines
 * on screen belong to a turn still running.
 */
function turnOpen(above: string[], echo: number, end: number): boolean {
  if (echo !== -1 || end !== -1) return echo > end;
  return !above.some((l) => HEADER.test(l)) && above.some((l) => AGENT_LINE.test(l));
}

/** "■ exceeded retry limit, last status: 429 …" and its continuation lines (indented by 2). */
function errorText(above: string[], at: number): string {
  const parts = [above[at]!.replace(ENDED, "").trim()];
  for (let i = at + 1; i < above.length && /^ {2}\S/.test(above[i]!) && !WORKED.test(above[i]!); i++)
    parts.push(above[i]!.trim());
  return parts.join(" ");
}

/**
 * "Would you like to run the following command?" … "$ touch x" (a command), "Would you like to
 * make the following edits?" … "Destination: /abs/path" (an edit), or another approval.
 */
function readApproval(lines: string[]): PermissionScreen {
  const asked = lines.findLastIndex((l) => /^\s*Would you like to .+\?\s*$/.test(l));
  const question = asked === -1 ? "approve the request?" : lines[asked]!.trim();
  const below = lines.slice(asked + 1).map((l) => l.trim());
  if (/run the following command/.test(question)) {
    const command = below.find((l) => l.startsWith("$ "))?.slice(2) ?? "";
    return { state: "permission", tool: "Bash", detail: command || question };
  }
  if (/make the following edits/.test(question)) {
    const file = below.find((l) => l.startsWith("Destination: "))?.slice("Destination: ".length) ?? "";
    return { state: "permission", tool: "apply_patch", detail: file || question };
  }
  return { state: "permission", tool: "other", detail: question };
}

/** "› 1. Red                A bold red button": the cursor, the number, the label, its description. */
const OPTION = /^\s*(?:› )?(\d+)\. (.+?)(?: {2,}(.+?))?\s*$/;
/** The row Codex adds after the agent's options. */
const OWN_ROW = /^None of the above$/;

function readQuestion(lines: string[]): QuestionScreen {
  const head = lines.findLastIndex((l) => /^\s*Question \d+\/\d+/.test(l));
  const questions = Number(lines[head]!.match(/Question \d+\/(\d+)/)![1]);
  const below = lines.slice(head + 1);
  const asked = below.findIndex((l) => l.trim() !== "");
  const options = below
    .slice(asked + 1)
    .map((l) => l.match(OPTION))
    .filter((m): m is RegExpMatchArray => m !== null && !OWN_ROW.test(m[2]!))
    .map((m) => ({ index: Number(m[1]), label: m[2]!, ...(m[3] ? { description: m[3] } : {}) }));
  return { state: "question", question: below[asked]?.trim() ?? null, options, questions };
}

function readStartDialog(lines: string[], dialog: StartDialog): StartDialogScreen {
  // "  Folder access" / "  /the/folder" / "" / "  Trust this folder? …"
  const at = lines.findIndex((l) => l.trim() === "Folder access");
  const folder = dialog === "folder-trust" && at !== -1 ? (lines[at + 1]?.trim() ?? null) : null;
  return { state: "start_dialog", dialog, folder };
}

function readExit(screen: string): ExitedScreen {
  const status = screen.match(/Pane is dead \(status (\d+)/);
  return {
    state: "exited",
    resumeId: screen.match(/codex resume ([0-9a-f-]{36})/)?.[1] ?? null,
    exitStatus: status ? Number(status[1]) : null,
  };
}

/** The composer's text (see ComposerScreen.input), or null when no composer is shown. */
export function composerText(text: string): string | null {
  const screen = classifyScreen(text);
  return screen.state === "idle" || screen.state === "working" ? screen.input : null;
}
