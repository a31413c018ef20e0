import type { AgentObservation, ScreenReading } from "../agent.ts";
import { screenQuestion } from "../questions.ts";
import { commonScreenObservation } from "../screen-observation.ts";
import { isRateLimit } from "./reader.ts";
import { toolOfTitle } from "./tools.ts";

/**
 * Reads a `tmux capture-pane -p` screen of the Gemini CLI (0.61.0, main screen buffer; every
 * pattern is tested against panes captured from the real CLI).
 *
 * The composer sits at the bottom: a rule of "─" from the first column, the mode line, the input
 * line (" > " + text, " * " in YOLO mode, "   Type your message or @path/to/file" when empty),
 * the footer; without colours (NO_COLOR) rules also frame the input line. The line above the
 * composer is the status line: while the agent works it reads "⠼ <phrase> (esc to cancel, 3s)" —
 * hook progress and the "? for shortcuts" hint are painted over it, so only "(esc to cancel" is
 * trusted. A dialog (permission, question, plan, folder trust) takes the composer's place: no
 * rule is drawn. Past prompts are echoed as " > text" (without colours "> text").
 */

export type GeminiScreen =
  | { state: "idle"; input: string; interrupted: boolean; apiError: string | null }
  | { state: "working"; input: string }
  | { state: "permission"; tool: string; detail: string; question: string }
  | { state: "question"; question: string | null; options: Array<{ index: number; label: string }> }
  /** status: from tmux's "Pane is dead (status N, …)" (remain-on-exit); null when not shown. */
  | { state: "exited"; status: number | null }
  | { state: "plan" | "trust" | "starting" };

const RULE = /^─{10,}\s*$/;
const INPUT = /^ [>*!] (.*)$/;
/** A start-up notice ("⚠  Warning: True color …", "ℹ …"), its wrapped lines, or nothing. */
const NOTICE = /^(?:[⚠ℹ] .*| {3}\S.*|\s*)$/;
/** A past prompt as the transcript on screen shows it. */
const ECHO = /^ ?[>*!] \S/;
const PLACEHOLDER = /^\s*Type your message or @path\/to\/file\s*$/;
const WORKING = /\(esc to cancel/;
/** The CLI's header, drawn once at the top of the conversation it shows. */
const BANNER = /^(?: ▝▜▄ +Gemini CLI v|Tips for getting started:)/;
/** A resumed conversation being loaded (the input box is hidden meanwhile), or its loading failed. */
const RESUMING = /^\s*\S+ Resuming session\.\.\./;
const RESUME_FAILED = /Failed to resume session/;
const EXITED = /Agent powering down\. Goodbye!|To resume this session: gemini --resume|^Pane is dead/;
/**
 * The hint a large paste shows for 3 s (WARNING_PROMPT_DURATION_MS). Its timer starts after the
 * CLI's 40 ms paste guard, during which Enter adds a newline: gone, the guard is over.
 */
const PASTE_HINT = /^ Press \S+ to expand pasted text/;
const PERMISSION_QUESTION = /(Apply this change\?|Allow execution of .*\?|Do you want to proceed\?)/;
/** A box's row: "│ text │" (the right border may be cut on a narrow screen). */
const ROW = /^\s*│ ?(.*?)\s*│?\s*$/;

export interface GeminiScreenOptions {
  paneDead?: boolean;
  /** Launched to continue a conversation (resume, fork), not shown ready yet. */
  resuming?: boolean;
}

export function classifyScreen(text: string, options: GeminiScreenOptions = {}): GeminiScreen {
  const lines = screenLines(text);
  const composer = composerOf(lines);
  const after = composer ? lines.slice(composer.input) : lines;
  if (options.paneDead || after.some((l) => EXITED.test(l))) {
    const status = text.match(/Pane is dead \(status (\d+)/)?.[1];
    return { state: "exited", status: status === undefined ? null : Number(status) };
  }
  if (!composer) return readDialog(lines);
  const input = inputOf(lines, composer.input);
  const above = lines.slice(0, composer.top);
  const statusAt = above.findLastIndex((l) => l.trim() !== "");
  // The first frames: the composer under start-up notices at most, drawn before the CLI takes
  // pastes (one sent now arrives as keys: "?" opens the shortcuts help, Enter submits); the
  // banner comes with the frame after.
  if (above.slice(0, Math.max(0, statusAt)).every((l) => NOTICE.test(l))) return { state: "starting" };
  if (options.resuming && !resumeLoaded(above)) return { state: "starting" };
  const status = above[statusAt] ?? "";
  if (WORKING.test(status)) return { state: "working", input };
  const turn = above.slice(above.findLastIndex((l) => ECHO.test(l)) + 1);
  return {
    state: "idle",
    input,
    interrupted: turn.some((l) => l.startsWith("ℹ Request cancelled.")),
    apiError: errorOf(turn),
  };
}

/**
 * A resumed (or forked) CLI draws its input box before it loads the conversation, then hides it
 * for "Resuming session..." and drops what was typed meanwhile. Loaded: the conversation's
 * prompts are on screen under the header, or it is long enough to have pushed the header off,
 * or the CLI said the load failed.
 */
function resumeLoaded(above: string[]): boolean {
  if (above.some((l) => RESUMING.test(l))) return false;
  if (above.some((l) => RESUME_FAILED.test(l))) return true;
  return above.some((l) => ECHO.test(l)) || !above.some((l) => BANNER.test(l));
}

function screenLines(text: string): string[] {
  return (text.includes("\x1b") ? Bun.stripANSI(text) : text).replace(/\s+$/, "").split("\n");
}

/**
 * The composer: its input line, and its top rule. Above the input line, up to the status line,
 * there are only rules, blank lines and the mode line; a past prompt, which looks like the input
 * line, has no rule there.
 */
function composerOf(lines: string[]): { input: number; top: number } | null {
  for (let i = lines.length - 1; i > 0; i--) {
    if (!INPUT.test(lines[i]!)) continue;
    let top = -1;
    let texts = 0;
    for (let j = i - 1; j >= Math.max(0, i - 8) && texts < 2; j--) {
      if (RULE.test(lines[j]!)) top = j;
      else if (lines[j]!.trim() !== "") texts++;
    }
    if (top !== -1) return { input: i, top };
  }
  return null;
}

/** The input line's text ("" for the placeholder); lines it wraps onto are indented. */
function inputOf(lines: string[], at: number): string {
  const parts = [lines[at]!.match(INPUT)![1]!];
  for (let i = at + 1; i < lines.length && /^ {3}\S/.test(lines[i]!); i++) parts.push(lines[i]!.slice(3));
  const input = parts.map((p) => p.trimEnd()).join("\n");
  return PLACEHOLDER.test(input) ? "" : input.trim();
}

/** "✕ [API Error: …]" of the last turn, with the lines it wraps onto. */
function errorOf(turn: string[]): string | null {
  const at = turn.findLastIndex((l) => l.startsWith("✕ "));
  if (at === -1) return null;
  const parts = [turn[at]!.slice(2).trim()];
  for (let i = at + 1; i < turn.length && /^ {2}\S/.test(turn[i]!); i++) parts.push(turn[i]!.trim());
  return parts.join(" ");
}

function readDialog(lines: string[]): GeminiScreen {
  const screen = lines.join("\n");
  if (/Do you trust the files in this folder\?/.test(screen)) return { state: "trust" };
  if (/Ready to start implementation\?/.test(screen)) return { state: "plan" };
  if (/│ Answer Questions/.test(screen)) return readQuestion(lines);
  const asked = lines.findLastIndex((l) => PERMISSION_QUESTION.test(l));
  if (asked === -1) return { state: "starting" };
  // "│ ? Shell  touch x.txt", "│ ? WriteFile  Writing to hello.txt": the tool, then what it does.
  const title = lines
    .slice(0, asked)
    .findLast((l) => /^\s*│ \? \S/.test(l))
    ?.match(/│ \? (\S+)\s+(.*?)\s*│?\s*$/);
  const question = lines[asked]!.match(PERMISSION_QUESTION)![1]!;
  const detail = (title?.[2] ?? "").replace(/^Writing to /, "");
  return { state: "permission", tool: toolOfTitle(title?.[1] ?? "tool"), detail, question };
}

/** "● 1.  Red" … "N.  Enter a custom value" (the dialog's own row) under the question. */
const OPTION = /^(?:● )?(\d+)\.\s+(.+)$/;

function readQuestion(lines: string[]): GeminiScreen {
  const rows = lines.map((l) => l.match(ROW)?.[1] ?? "");
  const header = rows.findLastIndex((r) => r === "Answer Questions");
  const below = rows.slice(header + 1);
  const question = below.find((r) => r.trim() !== "")?.trim() ?? null;
  const options = below
    .map((r) => r.trim().match(OPTION))
    .filter((m): m is RegExpMatchArray => m !== null && m[2] !== "Enter a custom value")
    .map((m) => ({ index: Number(m[1]), label: m[2]!.trim() }));
  return { state: "question", question, options };
}

/** The screen in the state fusion's words. */
export function toObservation(screen: GeminiScreen): AgentObservation {
  switch (screen.state) {
    case "permission":
      return {
        kind: "permission",
        request: { kind: "tool", tool: screen.tool, detail: screen.detail || screen.question },
      };
    case "question": {
      return { kind: "permission", request: screenQuestion("ask_user", screen.question, screen.options) };
    }
    case "plan":
      return {
        kind: "permission",
        request: { kind: "plan", tool: "exit_plan_mode", detail: "the agent proposes a plan" },
      };
    case "trust":
      return {
        kind: "permission",
        request: { kind: "trust", detail: "trust this folder?", dialog: "folder-trust" },
      };
    case "exited":
      return { kind: "exited", status: screen.status ?? 0 };
    default:
      return commonScreenObservation(screen, isRateLimit);
  }
}

export function readScreen(text: string, options: GeminiScreenOptions = {}): ScreenReading {
  const screen = classifyScreen(text, options);
  const input = screen.state === "idle" || screen.state === "working" ? screen.input : null;
  const reading: ScreenReading = {
    observation: toObservation(screen),
    input,
    activityKey: activityKey(text),
  };
  if (input && pasteGuardShown(text)) reading.enterGuarded = true;
  return reading;
}

/**
 * Whether the paste hint is on screen, above the composer. The CLI turns an Enter into a newline
 * for 40 ms after a paste, through a timer and a React re-render: on a starved machine both can
 * come after ag's Enter, whatever ag waited. The hint's own timer was set after the guard's, in
 * the same keypress: its disappearance is the CLI's proof that the guard has run out.
 */
function pasteGuardShown(text: string): boolean {
  const lines = screenLines(text);
  const composer = composerOf(lines);
  return composer !== null && lines.slice(0, composer.top).some((l) => PASTE_HINT.test(l));
}

/** The screen above the status line (spinner, timer, hook progress) and the composer. */
function activityKey(text: string): string {
  const lines = screenLines(text);
  const composer = composerOf(lines);
  if (!composer) return lines.join("\n");
  const above = lines.slice(0, composer.top);
  const status = above.findLastIndex((l) => l.trim() !== "");
  return above.slice(0, Math.max(0, status)).join("\n");
}
