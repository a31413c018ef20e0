import type { StatusEventName } from "../../../events/names.ts";
import type { SessionStatus } from "../../session.ts";
import type { StatusState, TurnEnd } from "./state.ts";

const ENTER_EVENTS: Partial<Record<SessionStatus, StatusEventName[]>> = {
  working: ["session.working", "status.working"],
  idle: ["session.idle", "status.idle"],
  asking: ["status.question"],
  stalled: ["session.stalled", "status.stall"],
  completed: ["session.ended"],
  crashed: ["status.dead", "session.ended"],
  killed: ["session.killed", "session.ended"],
};

export function transitionEvents(
  prev: StatusState,
  next: StatusState,
  turnEnd: TurnEnd | undefined,
): StatusEventName[] {
  const events: StatusEventName[] = [];
  const newPermission = next.pending !== null && next.pending.id !== prev.pending?.id;
  if (prev.status !== next.status || newPermission) {
    if (prev.status === "stalled" && next.status !== "stalled") events.push("status.recovered");
    if (next.status === "permission_prompt") {
      events.push(
        "permission.requested",
        next.pending?.kind === "plan" ? "status.plan" : "status.permission",
      );
    } else {
      if (next.status === "asking") events.push("permission.requested");
      events.push(...(ENTER_EVENTS[next.status] ?? []));
    }
  }
  if (turnEnd) events.push("session.turn_ended");
  return events;
}
