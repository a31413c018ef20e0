import type { AgentObservation, PermissionRequest, ScreenReading } from "../agent.ts";
import { isCliProcess } from "../process.ts";
import { commonScreenObservation } from "../screen-observation.ts";

/**
 * Reads a `tmux capture-pane -p` screen of OpenCode's TUI (pinned 1.18.33; every pattern is
 * tested against panes captured from the real CLI).
 *
 * The live input box is the block of "┃" lines right above the "╹▀▀▀…" rule: a padding line,
 * the text, a padding line, then the agent and model ("Build · Mock Sonnet …"). Under the rule
 * is the status line: a moving "⬝■" bar with "esc interrupt" while a turn runs. A permission or
 * question dialog takes the box's place (no rule then). Past prompts are "┃" blocks too, but
 * never touch the rule: an assistant message's "▣" footer always ends the conversation above it.
 * On a wide pane a sidebar fills the right: every line is cut at the rule's width.
 */

type Dialog = Extract<AgentObservation, { kind: "permission" }>["request"];

export type OpenCodeScreen =
  /** home: its start screen (the logo over the box), no conversation drawn yet. */
  | { state: "idle"; input: string; interrupted: boolean; home: boolean }
  | { state: "working"; input: string; retrying: boolean }
  /** A prompt taken, its reply not begun (no "▣" footer under it yet): no word on the turn. */
  | { state: "pending"; input: string }
  | { state: "dialog"; request: PermissionRequest }
  | { state: "exited"; resumeId: string | null; exitStatus: number | null }
  | { state: "starting" };

const RULE = /^(\s*)╹▀+/;
const BAR = /^\s*┃/;
const BAR_TEXT = /^\s*┃ {0,2}/;
const PLACEHOLDER = /^Ask anything…(?: ".*")?$/;
const WORKING = /\besc (?:again to )?interrupt\b|[⬝■]{8}/;
const RETRYING = /\[retrying\b/;
const FOOTER = /^\s*▣\s/;
const EXIT = /^\s*Continue\s+opencode -s (\S+)|^Pane is dead/;
const PERMISSION = /△ (?:Permission required|Always allow)/;
const QUESTION_KEYS = /↑↓ select\s+enter submit\s+esc dismiss/;
const OPTION = /^(\d+)\. (.+)$/;
/** Moves by itself: a running tool's braille spinner. */
const SPINNER = /[\u2800-\u28ff]/g;

export function classifyOpenCodeScreen(text: string, options: { paneDead?: boolean } = {}): OpenCodeScreen {
  const lines = screenLines(text);
  const rule = lines.findLastIndex((l) => RULE.test(l));
  const exit = lines.findLastIndex((l) => EXIT.test(l));
  if (options.paneDead || (exit !== -1 && exit > rule)) return readExit(lines.slice(Math.max(exit, 0)));
  if (rule === -1) return readDialog(lines) ?? { state: "starting" };
  const box = inputBox(lines, rule);
  const status = lines.slice(rule + 1).find((l) => l.trim() !== "") ?? "";
  if (WORKING.test(status)) return { state: "working", input: box.input, retrying: RETRYING.test(status) };
  const above = lines.slice(0, box.top);
  const footerAt = above.findLastIndex((l) => FOOTER.test(l));
  // A reply (its text, its tools' blocks) ends with its "▣" footer, drawn as soon as it begins:
  // a prompt block below the last footer has no reply yet. Loaded, OpenCode drew it seconds
  // before the turn began; it says neither that the agent works nor that the turn ended.
  if (above.findLastIndex((l) => BAR.test(l)) > footerAt) return { state: "pending", input: box.input };
  // Every prompt and reply is drawn in "┃" blocks and "▣" footers; the start screen has neither.
  const home = footerAt === -1 && !above.some((l) => BAR.test(l));
  const interrupted = / · interrupted\s*$/.test(above[footerAt] ?? "");
  return { state: "idle", input: box.input, interrupted, home };
}

function screenLines(text: string): string[] {
  const plain = text.includes("\x1b") ? Bun.stripANSI(text) : text;
  return plain.replace(/\s+$/, "").split("\n");
}

/** The box above the rule at `rule`: where it starts, and its text (a placeholder reads empty). */
function inputBox(lines: string[], rule: number): { top: number; input: string } {
  const width = lines[rule]!.trimEnd().length;
  let top = rule - 1;
  while (top > 0 && BAR.test(lines[top - 1]!)) top--;
  // top: padding; rule-1: agent and model; rule-2: padding.
  const input = lines
    .slice(top + 1, Math.max(top + 1, rule - 2))
    .map((l) => l.slice(0, width).replace(BAR_TEXT, "").trimEnd())
    .join("\n")
    .trim();
  return { top, input: PLACEHOLDER.test(input) ? "" : input };
}

function readExit(lines: string[]): OpenCodeScreen {
  const screen = lines.join("\n");
  const status = screen.match(/Pane is dead \(status (\d+)/);
  return {
    state: "exited",
    resumeId: screen.match(/Continue\s+opencode -s (\S+)/)?.[1] ?? null,
    exitStatus: status ? Number(status[1]) : null,
  };
}

/** The dialog's own lines: the "┃" block that holds its keys' hint, without the bar. */
function dialogBlock(lines: string[], hint: number): string[] {
  let top = hint;
  while (top > 0 && BAR.test(lines[top - 1]!)) top--;
  return lines.slice(top, hint + 1).map((l) => l.replace(BAR_TEXT, "").trim());
}

function readDialog(lines: string[]): OpenCodeScreen | null {
  const asked = lines.findLastIndex((l) => PERMISSION.test(l));
  if (asked !== -1)
    return {
      state: "dialog",
      request: permissionOf(lines.slice(asked).map((l) => l.replace(BAR_TEXT, "").trim())),
    };
  const hint = lines.findLastIndex((l) => QUESTION_KEYS.test(l));
  if (hint === -1) return null;
  return { state: "dialog", request: questionOf(dialogBlock(lines, hint)) };
}

/**
 * "△ Permission required", then what it is about: "# Shell command" over "$ <command>", or
 * "→ Edit <file>" over the diff; "△ Always allow" confirms an "Allow always".
 */
function permissionOf(body: string[]): PermissionRequest {
  const title = body.find((l, i) => i > 0 && l !== "") ?? "";
  if (title.startsWith("# Shell command")) {
    const command = body.find((l) => l.startsWith("$ "))?.slice(2) ?? "";
    return { kind: "tool", tool: "bash", detail: command || "a shell command" };
  }
  const file = title.match(/^→ (\w+) (.+)$/);
  if (file) return { kind: "tool", tool: file[1]!.toLowerCase(), detail: file[2]! };
  return { kind: "tool", tool: "tool", detail: title || "a tool permission" };
}

/** The question, then its options "1. Red" (a description line under each); OpenCode adds "Type your own answer". */
function questionOf(block: string[]): Dialog {
  const lines = block.filter((l) => l !== "");
  const options = lines
    .map((l) => l.match(OPTION))
    .filter((m): m is RegExpMatchArray => m !== null && m[2] !== "Type your own answer")
    .map((m) => ({ index: Number(m[1]), label: m[2]! }));
  const question =
    lines.find((l) => !OPTION.test(l) && !QUESTION_KEYS.test(l)) ?? "the agent asks a question";
  return {
    kind: "question",
    tool: "question",
    detail: question,
    question,
    ...(options.length ? { options } : {}),
  };
}

/** The state-fusion reading of a classified screen. */
export function toObservation(screen: OpenCodeScreen): AgentObservation {
  if (screen.state === "dialog") return { kind: "permission", request: screen.request };
  // No API error shows on OpenCode's idle screen (its session.error hook says it).
  return commonScreenObservation(screen, () => false);
}

export function readOpenCodeScreen(text: string, options: { paneDead?: boolean } = {}): ScreenReading {
  const screen = classifyOpenCodeScreen(text, options);
  return {
    observation: toObservation(screen),
    input: "input" in screen ? screen.input : null,
    activityKey: activityKey(text),
  };
}

/** What the agent produced: the screen above the input box (or the whole dialog), spinners left out. */
function activityKey(text: string): string {
  const lines = screenLines(text);
  const rule = lines.findLastIndex((l) => RULE.test(l));
  const body = rule === -1 ? lines : lines.slice(0, inputBox(lines, rule).top);
  return body.join("\n").replace(SPINNER, "");
}

/**
 * OpenCode runs as its native binary: `opencode` (the platform package's), `opencode.exe` (the
 * npm package's link to it), or through node with the npm package's launcher.
 */
export function isOpenCodeProcess(argv: readonly string[]): boolean {
  return isCliProcess(argv, ["opencode", "opencode.exe"], /opencode-ai\/bin\/opencode/);
}
