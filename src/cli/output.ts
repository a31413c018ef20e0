import { AgError, describeError } from "../shared/errors.ts";

/** The only place that prints for humans. Errors and diagnostics go to stderr. */

export function printLine(text = ""): void {
  process.stdout.write(`${text}\n`);
}

export function printJson(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}

/** `ag: <message> [CODE]`; the stack only when asked for (--debug). */
export function printError(error: unknown, debug: boolean): void {
  const code = error instanceof AgError ? ` [${error.code}]` : "";
  process.stderr.write(`ag: ${describeError(error)}${code}\n`);
  if (debug && error instanceof Error && error.stack) process.stderr.write(`${error.stack}\n`);
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
