import type { PendingPermission, SessionStatus } from "../sessions/index.ts";
import type { StreamedEvent } from "./events.ts";
import { type Colour, paint } from "./output.ts";
import { clip, clock, oneLine, pendingSummary, STATUS_COLOUR, toolCallSummary } from "./views.ts";

/**
 * A session's events as `ag tail` prints them: one line per thing that happened,
 * `HH:MM:SS  what  detail`.
 *
 * One change of state is published under several names (`session.idle` and `status.idle`,
 * `permission.requested` and `status.permission`, `session.killed` and `session.ended` — the
 * SPEC's SSE names beside the channel names, CONTRACT §5). They carry the same `previous → status`
 * and the same pending prompt, and arrive one after the other: the first is printed, named by
 * the state it enters, and its twins are dropped. `--json` keeps every event as it came.
 */

/** The names one transition publishes together (src/sessions/live/fusion/events.ts). */
const TRANSITION_EVENTS = new Set([
  "session.working",
  "status.working",
  "session.idle",
  "status.idle",
  "permission.requested",
  "status.permission",
  "status.plan",
  "status.question",
  "session.stalled",
  "status.stall",
  "status.dead",
  "session.killed",
  "session.ended",
  "status.recovered",
]);

/** Events with a line of their own, by the word that names them. */
const LABELS: Record<string, string> = {
  "session.created": "created",
  "message.user": "user",
  "message.assistant": "assistant",
  "message.thinking": "thinking",
  "message.tool_use": "tool",
  "message.tool_result": "result",
  "status.error": "error",
  "status.rate_limited": "rate limited",
  "status.stopped": "stopped",
  "status.permission_timeout": "unanswered",
  "swarm.teammate_spawned": "teammate",
  "swarm.teammate_finished": "teammate",
  verification: "verified",
  "consensus.completed": "consensus",
  gap: "gap",
};

const LABEL_WIDTH = 11;

interface StatusMetaLike {
  status?: SessionStatus;
  previous?: SessionStatus;
  pendingPermission?: PendingPermission | null;
  reason?: string;
}

export interface TimelineLine {
  /** The word in the second column: the state entered, or what kind of thing happened. */
  label: string;
  detail: string;
  colour?: Colour;
}

/** Turns events into lines; stateful only to drop a change's twins. */
export function createTimeline(): (event: StreamedEvent) => TimelineLine | null {
  const lastChange = new Map<string, string>();
  return (event) => {
    const meta = event.meta as StatusMetaLike;
    const session = event.session?.id ?? "";
    if (event.event === "session.turn_ended") {
      // The idle line says it all when the turn went well; a failed or interrupted one is news.
      if (meta.reason === "completed" || meta.reason === undefined) return null;
      return { label: `turn ${meta.reason}`, detail: oneLine(event.detail), colour: "yellow" };
    }
    if (TRANSITION_EVENTS.has(event.event) && meta.status) {
      const key = `${meta.previous}→${meta.status}|${meta.pendingPermission?.id ?? ""}`;
      if (lastChange.get(session) === key) return null;
      lastChange.set(session, key);
      return statusLine(event, meta.status, meta.pendingPermission ?? null);
    }
    return eventLine(event);
  };
}

function statusLine(
  event: StreamedEvent,
  status: SessionStatus,
  pending: PendingPermission | null,
): TimelineLine {
  const colour = STATUS_COLOUR[status];
  if (status === "permission_prompt" || status === "asking") {
    const label =
      pending?.kind === "question" || status === "asking" ? "question" : (pending?.kind ?? "permission");
    return {
      label: label === "tool" ? "permission" : label,
      detail: pending ? pendingSummary(pending) : oneLine(event.detail),
      colour,
    };
  }
  return { label: status, detail: oneLine(event.detail), colour };
}

function eventLine(event: StreamedEvent): TimelineLine {
  const label = LABELS[event.event] ?? event.event;
  const meta = event.meta as Record<string, unknown>;
  switch (event.event) {
    case "message.tool_use":
      return {
        label,
        detail: toolCallSummary(String(meta.tool ?? event.detail), meta.input),
        colour: "blue",
      };
    case "message.tool_result":
      return {
        label: meta.isError === true ? "tool error" : label,
        detail: clip(oneLine(event.detail), 200),
        colour: meta.isError === true ? "red" : "dim",
      };
    case "message.assistant":
      return { label, detail: oneLine(event.detail), colour: "green" };
    case "message.user":
      return { label, detail: oneLine(event.detail), colour: "blue" };
    case "message.thinking":
      return { label, detail: clip(oneLine(event.detail), 200), colour: "dim" };
    case "status.permission_timeout": {
      const pending = meta.pendingPermission as PendingPermission | undefined;
      return { label, detail: pending ? pendingSummary(pending) : oneLine(event.detail), colour: "yellow" };
    }
    case "status.error":
    case "status.rate_limited":
      return { label, detail: oneLine(event.detail), colour: "red" };
    default:
      return { label, detail: oneLine(event.detail), colour: event.event === "gap" ? "dim" : "cyan" };
  }
}

/** `HH:MM:SS  label        detail`. */
export function formatTimelineLine(at: string, line: TimelineLine, colour: boolean): string {
  const label = paint(line.label.padEnd(LABEL_WIDTH), line.colour, colour);
  return `${clock(at)}  ${label}  ${line.detail}`.trimEnd();
}
