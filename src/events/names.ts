/**
 * The event catalog: SPEC's SSE names and its channel names, one internal model (CONTRACT §5).
 */
export const EVENT_NAMES = [
  "session.created",
  "session.working",
  "session.idle",
  "session.stalled",
  "session.killed",
  "session.ended",
  "session.turn_ended",
  "permission.requested",
  "consensus.completed",
  "verification",
  "message.user",
  "message.assistant",
  "message.thinking",
  "message.tool_use",
  "message.tool_result",
  "status.idle",
  "status.working",
  "status.permission",
  "status.question",
  "status.plan",
  "status.stall",
  "status.dead",
  "status.stopped",
  "status.error",
  "status.rate_limited",
  "status.permission_timeout",
  "status.recovered",
  "swarm.teammate_spawned",
  "swarm.teammate_finished",
] as const;

export type EventName = (typeof EVENT_NAMES)[number];
