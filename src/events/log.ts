import { jsonFields, type Logger } from "../shared/log.ts";
import type { AgEvent, EventBus } from "./bus.ts";
import type { EventName, PendingPermission } from "./names.ts";

/**
 * The server's terminal tells what its sessions do: one `info` line per change a person running
 * `ag` cares about — created, waiting for a human (and for what), idle (how its turn ended),
 * stalled, recovered, ended (why). Human words in the text format; in JSON logs the same line
 * as `msg` plus the fields (`event`, `sessionId`, `status` …).
 *
 * The bus tells one change under several names (session.idle and status.idle,
 * permission.requested and status.permission, session.killed and session.ended …): each change
 * is logged once, from the one name below. A turn's end and its API error come as events of
 * their own right after the idle they caused (one transition publishes them together, at once),
 * so the idle line waits for the end of that burst to say how the turn ended.
 */

/** Details are one line, and short: a command or a question can be long. */
const DETAIL_MAX = 200;

interface PendingIdle {
  event: AgEvent<"status.idle">;
  turn?: string;
  error?: string;
}

export function logSessionEvents(bus: EventBus, logger: Logger): () => void {
  /** Sessions launched but not yet idle: their first idle is "ready", not a turn's end. */
  const booting = new Set<string>();
  const idles = new Map<string, PendingIdle>();
  let flushQueued = false;

  function write(event: AgEvent, text: string, fields: Record<string, unknown>, warn: boolean): void {
    const session = event.session!;
    const label = session.name.includes(session.id.slice(0, 8))
      ? session.name
      : `${session.name} (${session.id.slice(0, 8)})`;
    const status = "status" in event.meta ? event.meta.status : undefined;
    const structured = jsonFields({ event: event.event, sessionId: session.id, status, ...fields });
    if (warn) logger.warn(`session ${label}: ${text}`, structured);
    else logger.info(`session ${label}: ${text}`, structured);
  }

  /** A line of its own; an idle line still waiting goes first, so lines keep the events' order. */
  function line(event: AgEvent, text: string, fields: Record<string, unknown> = {}, warn = false): void {
    if (idles.size > 0) flush();
    write(event, text, fields, warn);
  }

  function flush(): void {
    flushQueued = false;
    for (const idle of idles.values()) {
      const { event, turn, error } = idle;
      const first = booting.delete(event.session!.id);
      const why = turn ? `turn ${turn}${error ? `: ${oneLine(error)}` : ""}` : first ? "ready" : null;
      write(
        event,
        why ? `idle (${why})` : "idle",
        {
          previous: event.meta.previous,
          ...(turn ? { turn } : {}),
          ...(error ? { error } : {}),
        },
        false,
      );
    }
    idles.clear();
  }

  function onEvent(event: AgEvent): void {
    const id = event.session?.id;
    if (!id) return;
    switch (event.event) {
      case "session.created": {
        const { forkedFrom, parentId, resumed } = event.meta;
        if (!resumed) booting.add(id);
        const origin = forkedFrom
          ? `, fork of ${forkedFrom.slice(0, 8)}`
          : parentId
            ? `, teammate of ${parentId.slice(0, 8)}`
            : "";
        line(event, `${resumed ? "resumed" : "created"} in ${event.session!.workDir}${origin}`, {
          workDir: event.session!.workDir,
          permissionMode: event.meta.permissionMode,
          ...(forkedFrom ? { forkedFrom } : {}),
          ...(parentId ? { parentId } : {}),
        });
        return;
      }
      case "status.permission":
      case "status.plan":
      case "status.question": {
        const pending = event.meta.pendingPermission;
        line(event, `waits for ${waitingFor(event.event, pending)}: ${oneLine(event.detail)}`, {
          pendingPermission: pending,
        });
        return;
      }
      case "status.idle":
        if (idles.has(id)) flush();
        idles.set(id, { event });
        if (!flushQueued) {
          flushQueued = true;
          queueMicrotask(flush);
        }
        return;
      case "session.turn_ended": {
        const idle = idles.get(id);
        if (idle) idle.turn = event.meta.reason;
        return;
      }
      case "status.error":
      case "status.rate_limited": {
        const idle = idles.get(id);
        if (idle) idle.error = event.detail;
        else
          line(
            event,
            `${event.event === "status.error" ? "API error" : "rate limited"}: ${oneLine(event.detail)}`,
            {},
            true,
          );
        return;
      }
      case "status.stall":
        line(event, "stalled (no agent activity for its stall threshold)");
        return;
      case "status.recovered":
        line(event, `recovered (${event.meta.status})`);
        return;
      case "session.ended": {
        booting.delete(id);
        const reason = event.meta.reason;
        const detail = event.detail && event.detail !== reason ? `: ${oneLine(event.detail)}` : "";
        line(event, `ended (${reason})${detail}`, { reason });
        return;
      }
    }
  }

  return bus.subscribe(onEvent);
}

function waitingFor(event: EventName, pending: PendingPermission | null): string {
  if (event === "status.question") return "an answer";
  if (event === "status.plan") return "plan approval";
  return pending?.kind === "trust" ? "a start-up dialog to be answered" : "permission";
}

function oneLine(text: string): string {
  const flat = text.replace(/\r?\n/g, " ⏎ ").trim();
  return flat.length > DETAIL_MAX ? `${flat.slice(0, DETAIL_MAX - 1)}…` : flat;
}
