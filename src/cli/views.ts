import type { Session, SessionStatus } from "../sessions/index.ts";
import type { TranscriptMessage } from "../transcript/cursor.ts";
import type { StreamedEvent } from "./events.ts";
import { type Colour, formatAge, paint } from "./output.ts";

/** How sessions, messages and events read in a terminal. Pure: the commands print the result. */

const STATUS_COLOUR: Record<SessionStatus, Colour> = {
  working: "cyan",
  idle: "green",
  permission_prompt: "yellow",
  asking: "yellow",
  stalled: "yellow",
  killed: "dim",
  completed: "dim",
  crashed: "red",
};

export const SESSION_HEADERS = ["ID", "NAME", "STATUS", "AGE", "WORKDIR"] as const;

/** One row per session; the workDir last, where a long path harms no other column. */
export function sessionRows(sessions: readonly Session[], now: number, colour: boolean): string[][] {
  return sessions.map((s) => [
    s.id.slice(0, 8),
    s.name,
    paint(s.status, STATUS_COLOUR[s.status], colour),
    formatAge((now - Date.parse(s.createdAt)) / 1000),
    s.workDir,
  ]);
}

const ROLE_COLOUR: Record<TranscriptMessage["role"], Colour> = {
  user: "blue",
  assistant: "green",
  system: "dim",
};

/** A message as a heading line (`#id time role/kind`) and its text, indented. */
export function messageLines(message: TranscriptMessage, colour: boolean): string[] {
  const time = message.timestamp ? ` ${clock(message.timestamp)}` : "";
  const what =
    message.kind === "tool_use" && message.toolName ? `tool_use ${message.toolName}` : message.kind;
  const head = paint(`#${message.id}${time} ${message.role} · ${what}`, ROLE_COLOUR[message.role], colour);
  const body = message.text === "" ? [] : message.text.split("\n").map((line) => `    ${line}`);
  return [head, ...body];
}

/** One line per event: `HH:MM:SS  event  detail`, the detail on one line. */
export function eventLine(event: StreamedEvent, colour: boolean): string {
  const name = paint(event.event.padEnd(20), eventColour(event.event), colour);
  return `${clock(event.timestamp)}  ${name}  ${event.detail.replace(/\s*\n\s*/g, " ⏎ ")}`.trimEnd();
}

function eventColour(name: string): Colour | undefined {
  if (name === "session.ended" || name === "session.killed" || name === "gap") return "dim";
  if (name.startsWith("permission.") || name === "status.permission" || name === "status.stall")
    return "yellow";
  if (name === "status.dead" || name === "status.error") return "red";
  if (name.startsWith("message.")) return "green";
  return "cyan";
}

/** Local wall-clock time of an ISO timestamp; the text itself when it does not parse. */
function clock(iso: string): string {
  const at = new Date(iso);
  if (Number.isNaN(at.getTime())) return iso;
  return [at.getHours(), at.getMinutes(), at.getSeconds()].map((n) => String(n).padStart(2, "0")).join(":");
}
