/**
 * What this server offers, by SPEC's capability names: the one list the handshake advertises.
 * A feature that is renamed or removed must change here too.
 */
export const SERVER_CAPABILITIES = [
  "session.create",
  "session.resume",
  "session.approve",
  "session.transcript",
  "session.transcript.cursor",
  "session.events.sse",
  "session.screenshot",
  "hooks.pre_tool_use",
  "hooks.post_tool_use",
  "hooks.notification",
  "hooks.stop",
  "swarm",
  "metrics",
] as const;

export type Capability = (typeof SERVER_CAPABILITIES)[number];
