import { type ConsolaInstance, type ConsolaReporter, createConsola, LogLevels } from "consola";

export type Logger = ConsolaInstance;

export const LOG_LEVELS = ["silent", "fatal", "error", "warn", "info", "debug", "trace"] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/** The active span's ids (telemetry's `activeIds`), or null outside a traced context. */
export type TraceIds = () => { traceId: string; spanId: string } | null;

export interface LoggerOptions {
  level: LogLevel;
  json: boolean;
  /**
   * Where log lines go. Always stderr in production: stdout belongs to command output and, in
   * `ag mcp`, to JSON-RPC, so a log line there would corrupt the protocol.
   */
  stream?: NodeJS.WritableStream;
  /** A line logged inside a traced context carries its ids (the composition root passes telemetry's). */
  traceIds?: TraceIds;
}

const LEVEL_NUMBER: Record<LogLevel, number> = {
  silent: LogLevels.silent,
  fatal: LogLevels.fatal,
  error: LogLevels.error,
  warn: LogLevels.warn,
  info: LogLevels.info,
  debug: LogLevels.debug,
  trace: LogLevels.trace,
};

/**
 * Fields for JSON logs only: a line whose words already say them (a session's event) would
 * only repeat them as `key=value` in the text format.
 */
export class JsonFields {
  constructor(readonly fields: Record<string, unknown>) {}
}

export function jsonFields(fields: Record<string, unknown>): JsonFields {
  return new JsonFields(fields);
}

export function createLogger(options: LoggerOptions): Logger {
  const stream = options.stream ?? process.stderr;
  const ids = options.traceIds ?? (() => null);
  const reporter = options.json ? jsonReporter(stream, ids) : textReporter(stream, ids);
  return createConsola({ level: LEVEL_NUMBER[options.level], reporters: [reporter] });
}

/** One JSON object per line: {time, level, msg, ...fields, traceId?, spanId?}. */
function jsonReporter(stream: NodeJS.WritableStream, activeIds: TraceIds): ConsolaReporter {
  return {
    log(entry) {
      const record: Record<string, unknown> = { time: entry.date.toISOString(), level: entry.type };
      const words: string[] = [];
      for (const arg of entry.args) {
        if (arg instanceof Error) record.error = { message: arg.message, stack: arg.stack };
        else if (arg instanceof JsonFields) Object.assign(record, arg.fields);
        else if (arg !== null && typeof arg === "object") Object.assign(record, arg);
        else words.push(String(arg));
      }
      record.msg = words.join(" ");
      // Inside a traced context (tracing on): the line joins its trace in a log backend.
      const ids = activeIds();
      if (ids) Object.assign(record, ids);
      stream.write(`${JSON.stringify(record)}\n`);
    },
  };
}

/** `2026-11-22T08:00:00.000Z INFO  listening on … key=value` */
function textReporter(stream: NodeJS.WritableStream, activeIds: TraceIds): ConsolaReporter {
  return {
    log(entry) {
      const parts: string[] = [];
      for (const arg of entry.args) {
        if (arg instanceof Error)
          parts.push(entry.level <= LogLevels.error ? (arg.stack ?? arg.message) : arg.message);
        else if (arg instanceof JsonFields) continue;
        else if (arg !== null && typeof arg === "object") {
          for (const [k, v] of Object.entries(arg))
            parts.push(`${k}=${typeof v === "string" ? v : JSON.stringify(v)}`);
        } else parts.push(String(arg));
      }
      const ids = activeIds();
      if (ids) parts.push(`traceId=${ids.traceId}`, `spanId=${ids.spanId}`);
      stream.write(`${entry.date.toISOString()} ${entry.type.toUpperCase().padEnd(5)} ${parts.join(" ")}\n`);
    },
  };
}

/**
 * Lets the first of a kind of line through and holds back its repeats for a window; the next one
 * let through counts them (`+N more like it`). For lines a stranger can cause at will (a refused
 * body, a malformed Host, an error with its stack): the log stays readable and the disk is not
 * theirs to fill. Kinds a stranger can vary are bounded too: at most `maxPerWindow` lines in all
 * per window, and at most `maxKeys` kinds remembered (past that the oldest are forgotten).
 */
export function createRepeatFilter(
  options: { windowMs?: number; maxKeys?: number; maxPerWindow?: number; now?: () => number } = {},
) {
  const windowMs = options.windowMs ?? 60_000;
  const maxKeys = options.maxKeys ?? 1_000;
  const maxPerWindow = options.maxPerWindow ?? 100;
  const now = options.now ?? Date.now;
  const seen = new Map<string, { at: number; held: number }>();
  let windowStart = Number.NEGATIVE_INFINITY;
  let admitted = 0;

  function remember(key: string, entry: { at: number; held: number }): void {
    seen.delete(key);
    seen.set(key, entry);
    if (seen.size > maxKeys) seen.delete(seen.keys().next().value!);
  }

  return {
    /** null: hold this one back; otherwise how many were held back since the last let through. */
    admit(key: string): number | null {
      const at = now();
      if (at - windowStart >= windowMs) {
        windowStart = at;
        admitted = 0;
      }
      const last = seen.get(key);
      if (last && at - last.at < windowMs) {
        last.held++;
        return null;
      }
      if (admitted >= maxPerWindow) {
        // Over the budget of all kinds: counted, to be said by this kind's next line.
        remember(key, { at: Number.NEGATIVE_INFINITY, held: (last?.held ?? 0) + 1 });
        return null;
      }
      admitted++;
      remember(key, { at, held: 0 });
      return last?.held ?? 0;
    },
  };
}

/** " (+3 more like it since the last such line)", or "": the tail of a line a repeat filter let through. */
export function repeatsNote(held: number): string {
  return held > 0 ? ` (+${held} more like it since the last such line)` : "";
}
