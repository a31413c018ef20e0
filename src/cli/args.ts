import type { ArgsDef } from "citty";
import { AgError } from "../shared/errors.ts";

/** Flags every command accepts, so `ag --port 9200 status` and `ag status --port=9200` both work. */
export const GLOBAL_ARGS = {
  port: { type: "string", description: "Port of the ag server", valueHint: "number" },
  config: {
    type: "string",
    description: "Config file (beats ./svc.config.json and ~/.svc/config.json)",
    valueHint: "path",
  },
  debug: { type: "boolean", description: "Print stack traces with errors" },
} as const satisfies ArgsDef;

/** The `<session>` of the session verbs; resolve.ts finds it by id, id prefix or name. */
export const SESSION_ARG = {
  type: "positional",
  required: true,
  description: "The session: its id, a unique start of the id, or its name",
  valueHint: "session",
} as const;

/** The arguments of a verb on one session: the global flags, `<session>`, and `--json` (`json` says what it prints). */
export function sessionVerbArgs(json: string) {
  return {
    ...GLOBAL_ARGS,
    session: SESSION_ARG,
    json: { type: "boolean", description: json },
  } as const satisfies ArgsDef;
}

export function parsePortFlag(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  if (!/^\d+$/.test(value) || Number(value) > 65535) {
    throw new AgError("USAGE_ERROR", `--port expects a number from 0 to 65535, got "${value}"`);
  }
  return Number(value);
}

/** A whole-number flag from 1 (to `max`), or `fallback` when absent. */
export function parseCountFlag(
  flag: string,
  value: string | undefined,
  fallback: number,
  max?: number,
): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!/^\d+$/.test(value) || n < 1 || (max !== undefined && n > max)) {
    const range = max === undefined ? "a whole number from 1" : `a whole number from 1 to ${max}`;
    throw new AgError("USAGE_ERROR", `${flag} expects ${range}, got "${value}"`);
  }
  return n;
}

/**
 * Every value of a flag given more than once (`-c "a" -c "b"`, `--criterion=c`), in order: citty
 * keeps only the last. `names` are the flag as typed, e.g. `["-c", "--criterion"]`.
 */
export function repeatedFlag(rawArgs: readonly string[], names: readonly string[]): string[] {
  const values: string[] = [];
  for (let i = 0; i < rawArgs.length; i++) {
    const arg = rawArgs[i]!;
    if (arg === "--") break;
    const eq = arg.indexOf("=");
    if (arg.startsWith("--") && eq !== -1 && names.includes(arg.slice(0, eq))) values.push(arg.slice(eq + 1));
    else if (names.includes(arg) && i + 1 < rawArgs.length) values.push(rawArgs[++i]!);
  }
  return values;
}
