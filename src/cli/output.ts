import { readTerminalEnv } from "../config/load.ts";
import { AgError, describeError } from "../shared/errors.ts";

/** The only place that prints for humans. Errors and diagnostics go to stderr. */

const isClosedPipe = (error: unknown) => (error as { code?: unknown } | null)?.code === "EPIPE";

/**
 * A reader that stopped reading (`ag list | head -1`) wants no more: the rest is nobody's, and
 * the command ends there, quietly, with status 0, as a Unix tool does — not with an EPIPE stack.
 * Bun throws it from the write itself; a stream may also report it later (see endOnClosedPipe).
 */
function write(stream: NodeJS.WriteStream, text: string): void {
  try {
    stream.write(text);
  } catch (error) {
    if (!isClosedPipe(error)) throw error;
    process.exit(0);
  }
}

/** For a CLI command: a closed stdout or stderr reported after the write ends it the same way. */
export function endOnClosedPipe(): void {
  for (const stream of [process.stdout, process.stderr])
    stream.on("error", (error) => {
      if (isClosedPipe(error)) process.exit(0);
      throw error;
    });
}

export function printLine(text = ""): void {
  write(process.stdout, `${text}\n`);
}

export function printJson(value: unknown): void {
  write(process.stdout, `${JSON.stringify(value, null, 2)}\n`);
}

/**
 * Every error's code, for scripts that branch on it: ag's own, USAGE_ERROR for what the argument
 * parser refuses (a missing argument), INTERNAL_ERROR for anything unforeseen.
 */
function codeOf(error: unknown): string {
  if (error instanceof AgError) return error.code;
  return (error as { name?: unknown } | null)?.name === "CLIError" ? "USAGE_ERROR" : "INTERNAL_ERROR";
}

/** `ag: <message> [CODE]`; the stack only when asked for (--debug). */
export function printError(error: unknown, debug: boolean): void {
  write(process.stderr, `ag: ${describeError(error)} [${codeOf(error)}]\n`);
  if (debug && error instanceof Error && error.stack) write(process.stderr, `${error.stack}\n`);
}

/** Two aligned columns: `  label   value`. */
export function printFields(fields: ReadonlyArray<readonly [string, string]>): void {
  const width = Math.max(...fields.map(([label]) => label.length));
  for (const [label, value] of fields) printLine(`  ${label.padEnd(width)}  ${value}`);
}

export function formatDuration(seconds: number): string {
  const s = Math.floor(seconds);
  const parts: string[] = [];
  const d = Math.floor(s / 86400);
  const h = Math.floor((s % 86400) / 3600);
  const m = Math.floor((s % 3600) / 60);
  if (d) parts.push(`${d}d`);
  if (h) parts.push(`${h}h`);
  if (m) parts.push(`${m}m`);
  parts.push(`${s % 60}s`);
  return parts.join(" ");
}

/** Colour only for a person at a terminal: never into a pipe or a file, never with NO_COLOR. */
export function colourEnabled(
  stream: { isTTY?: boolean } = process.stdout,
  env: Record<string, string | undefined> = process.env,
): boolean {
  return Boolean(stream.isTTY) && !readTerminalEnv(env).noColor;
}

const COLOURS = { dim: 2, bold: 1, red: 31, green: 32, yellow: 33, blue: 34, cyan: 36 } as const;
export type Colour = keyof typeof COLOURS;

export function paint(text: string, colour: Colour | undefined, enabled = colourEnabled()): string {
  return enabled && colour ? `\u001b[${COLOURS[colour]}m${text}\u001b[0m` : text;
}

/** Length as the terminal shows it: colour escapes take no room. */
function visibleLength(text: string): number {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: ANSI escapes are what is measured out
  return text.replace(/\u001b\[[0-9;]*m/g, "").length;
}

/** Aligned columns under a header row; the last column is never padded (it may be long). */
export function formatTable(headers: readonly string[], rows: ReadonlyArray<readonly string[]>): string[] {
  const all = [headers, ...rows];
  const widths = headers.map((_, i) => Math.max(...all.map((row) => visibleLength(row[i] ?? ""))));
  return all.map((row) =>
    row
      .map((cell, i) => (i === row.length - 1 ? cell : cell + " ".repeat(widths[i]! - visibleLength(cell))))
      .join("  ")
      .trimEnd(),
  );
}

export function printTable(headers: readonly string[], rows: ReadonlyArray<readonly string[]>): void {
  for (const line of formatTable(headers, rows)) printLine(line);
}

/** Progress and notes for the person, kept off stdout so that stdout stays the command's output. */
export function printNote(text: string): void {
  write(process.stderr, `${text}\n`);
}

/** One unit, the largest that fits: "42s", "5m", "3h", "2d". */
export function formatAge(seconds: number): string {
  const s = Math.max(0, Math.floor(seconds));
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m`;
  if (s < 86400) return `${Math.floor(s / 3600)}h`;
  return `${Math.floor(s / 86400)}d`;
}

const SPINNER = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];

/** A spinner on stderr at a terminal; elsewhere the text once, as a note. */
export function startSpinner(
  text: string,
  stream: { isTTY?: boolean; write(text: string): unknown } = process.stderr,
): { stop(): void } {
  if (!stream.isTTY) {
    stream.write(`${text}…\n`);
    return { stop() {} };
  }
  let frame = 0;
  const draw = () => stream.write(`\r${SPINNER[frame++ % SPINNER.length]} ${text}…`);
  draw();
  const timer = setInterval(draw, 100);
  return {
    stop() {
      clearInterval(timer);
      stream.write("\r\u001b[2K");
    },
  };
}

/** "1 attempt", "3 attempts"; `many` for words that do not just take an s. */
export function plural(count: number, one: string, many = `${one}s`): string {
  return `${count} ${count === 1 ? one : many}`;
}
