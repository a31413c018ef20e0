import type { TokenCounts } from "../agents/vocabulary.ts";
import type { PendingPermission, Session, SessionStatus } from "../sessions/index.ts";
import type { TranscriptMessage } from "../transcript/cursor.ts";
import { type Colour, formatAge, paint } from "./output.ts";

/** How sessions, prompts and messages read in a terminal. Pure: the commands print the result. */

export const STATUS_COLOUR: Record<SessionStatus, Colour> = {
  working: "cyan",
  idle: "green",
  permission_prompt: "yellow",
  asking: "yellow",
  stalled: "yellow",
  killed: "dim",
  completed: "dim",
  crashed: "red",
};

/** What the agent waits for, in one line: the tool and its input, the plan, the question and its options. */
export function pendingSummary(pending: PendingPermission): string {
  switch (pending.kind) {
    case "question": {
      const options = pending.options?.map((o) => `${o.index}. ${o.label}`).join(" · ");
      const question = pending.question ?? pending.detail;
      return options ? `${question} — ${options}` : question;
    }
    case "tool":
      return pending.tool ? `${pending.tool}: ${oneLine(pending.detail)}` : oneLine(pending.detail);
    case "plan":
      return `plan: ${oneLine(pending.detail)}`;
    default:
      return oneLine(pending.detail);
  }
}

/**
 * How to answer what the session waits for, as commands: `handle` is what the person would
 * type to name the session (its short id).
 */
export function answerHint(pending: PendingPermission, handle: string): string {
  if (pending.kind === "question") return `ag answer ${handle} <number>, or --text "…"`;
  return `ag approve ${handle} or ag reject ${handle}`;
}

export const SESSION_HEADERS = [
  "ID",
  "NAME",
  "AGENT",
  "STATUS",
  "AGE",
  "TOKENS",
  "COST",
  "BUDGET",
  "WORKDIR",
  "WAITS FOR",
] as const;

/** A session's tokens and estimated cost (GET /v1/metrics `bySession`). */
export interface SessionCost {
  tokens: TokenCounts;
  usd: number | null;
}

/**
 * One row per session. TOKENS counts every kind (input, output, cache reads and writes);
 * without metrics the session's own usage is shown and the cost is `-`. What it waits for goes
 * last, where a long question harms no other column.
 */
export function sessionRows(
  sessions: readonly Session[],
  now: number,
  colour: boolean,
  costs: ReadonlyMap<string, SessionCost> = new Map(),
): string[][] {
  return sessions.map((s) => {
    const cost = costs.get(s.id);
    const tokens = cost?.tokens ?? s.tokenUsage;
    return [
      s.id.slice(0, 8),
      s.name,
      s.agent,
      paint(s.status, STATUS_COLOUR[s.status], colour),
      formatAge((now - Date.parse(s.createdAt)) / 1000),
      formatCount(tokens.input + tokens.output + tokens.cacheRead + tokens.cacheCreation),
      cost?.usd == null ? "-" : formatUsd(cost.usd),
      budgetCell(s.budget ?? null),
      s.workDir,
      s.pendingPermission ? clip(pendingSummary(s.pendingPermission), 80) : "",
    ];
  });
}

/** "$0.40/$1.00", "paused $1.02/$1.00" when its budget is reached, "-" without a cap. */
export function budgetCell(budget: Session["budget"] | null): string {
  if (!budget) return "-";
  const cap =
    budget.usd === null
      ? budget.tokens === null
        ? "-"
        : `${formatCount(budget.tokens)} tok`
      : formatUsd(budget.usd);
  const cell = `${formatUsd(budget.spentUsd)}/${cap}`;
  if (budget.state === "reached")
    return `paused ${budget.reachedBy === "session" ? cell : `(${budget.reachedBy})`}`;
  return budget.usd === null && budget.tokens === null ? "-" : cell;
}

/**
 * In a fleet: a HOST column after NAME, `offline` beside a host whose lease expired (its sessions
 * are as last known).
 */
export function withHostColumn(
  headers: readonly string[],
  rows: readonly string[][],
  sessions: readonly Pick<Session, "host" | "hostOnline">[],
): [string[], string[][]] {
  const at = headers.indexOf("NAME") + 1;
  const host = (s: Pick<Session, "host" | "hostOnline">) =>
    s.host === undefined ? "" : s.hostOnline === false ? `${s.host} (offline)` : s.host;
  return [
    [...headers.slice(0, at), "HOST", ...headers.slice(at)],
    rows.map((row, i) => [...row.slice(0, at), host(sessions[i]!), ...row.slice(at)]),
  ];
}

/** 950 → "950", 12_345 → "12.3k", 4_200_000 → "4.2M". */
export function formatCount(n: number): string {
  if (n < 1000) return String(n);
  if (n < 1_000_000) return `${trimZero((n / 1000).toFixed(n < 10_000 ? 1 : 0))}k`;
  return `${trimZero((n / 1_000_000).toFixed(1))}M`;
}

export function formatUsd(usd: number): string {
  if (usd === 0) return "$0";
  if (usd < 0.01) return "<$0.01";
  return `$${usd.toFixed(2)}`;
}

const trimZero = (text: string) => text.replace(/\.0$/, "");

const ROLE_COLOUR: Record<TranscriptMessage["role"], Colour> = {
  user: "blue",
  assistant: "green",
  system: "dim",
};

/**
 * An entry with nothing to read (a bookkeeping `system · system` line, an empty text block) is
 * left out of `ag read`. Kinds whose heading says something on its own stay: an interrupt, a
 * tool call, its result, an API error.
 */
export function isEmptyMessage(message: TranscriptMessage): boolean {
  if (["interrupt", "tool_use", "tool_result", "api_error"].includes(message.kind)) return false;
  return message.text.trim() === "";
}

/** A message as a heading line (`#id time role/kind`) and its text, indented. */
export function messageLines(message: TranscriptMessage, colour: boolean): string[] {
  const time = message.timestamp ? ` ${clock(message.timestamp)}` : "";
  const what =
    message.kind === "tool_use" && message.toolName ? `tool_use ${message.toolName}` : message.kind;
  const head = paint(`#${message.id}${time} ${message.role} · ${what}`, ROLE_COLOUR[message.role], colour);
  const body = message.text === "" ? [] : message.text.split("\n").map((line) => `    ${line}`);
  return [head, ...body];
}

/** Which input of a tool call tells a person what it does: the command, the file, the pattern. */
export function toolCallSummary(tool: string, input: unknown): string {
  const fields = (input ?? {}) as Record<string, unknown>;
  const text = (key: string) => (typeof fields[key] === "string" ? (fields[key] as string) : undefined);
  const pick =
    text("command") ??
    text("file_path") ??
    text("notebook_path") ??
    (text("pattern") && [text("pattern"), text("path")].filter(Boolean).join(" in ")) ??
    text("url") ??
    text("query") ??
    text("description") ??
    text("prompt") ??
    firstQuestion(fields);
  const shown = pick ?? (Object.keys(fields).length ? JSON.stringify(fields) : "");
  return clip(oneLine(shown ? `${tool}: ${shown}` : tool), 200);
}

function firstQuestion(fields: Record<string, unknown>): string | undefined {
  const first = Array.isArray(fields.questions) ? (fields.questions[0] as { question?: unknown }) : undefined;
  return typeof first?.question === "string" ? first.question : undefined;
}

/** Newlines shown as `⏎`, so that one thing stays one line. */
export function oneLine(text: string): string {
  return text.trim().replace(/\s*\n\s*/g, " ⏎ ");
}

export function clip(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}

/** Local wall-clock time of an ISO timestamp; the text itself when it does not parse. */
export function clock(iso: string): string {
  const at = new Date(iso);
  if (Number.isNaN(at.getTime())) return iso;
  return [at.getHours(), at.getMinutes(), at.getSeconds()].map((n) => String(n).padStart(2, "0")).join(":");
}
