/**
 * What a person can do next with a session, in the console's own terms (its buttons and boxes):
 * the API's hints name REST routes, for clients (GET /v1/sessions/:id/health).
 */
import { DRIVER_TRAITS } from "../../src/drivers/traits.ts";
import { formatDuration } from "./format.ts";
import type { Session } from "./types.ts";

export function nextStep(
  s: Pick<Session, "status" | "driver" | "lastActivityAt" | "pendingPermission">,
  now = Date.now(),
): string {
  const { terminal, continues } = DRIVER_TRAITS[s.driver];
  const ended = continues
    ? "Resume continues its conversation, or read what it did in the transcript."
    : "Its transcript below shows what it did.";
  switch (s.status) {
    case "permission_prompt":
    case "asking":
      // The pending card answers it; without one (nothing read of the prompt yet) the terminal can.
      return terminal
        ? "The agent waits for you: answer in the terminal below (Take control), or Interrupt."
        : "The agent waits for you: Interrupt, or Kill.";
    case "stalled":
      return `No agent activity for ${formatDuration(now - Date.parse(s.lastActivityAt))}: send a nudge in the box below, Interrupt, or Kill.`;
    case "working":
      return "Working: follow it in the transcript below; Interrupt stops the turn.";
    case "idle":
      return "Ready for a prompt: type it in the box below.";
    case "crashed":
      return `The agent ended unexpectedly. ${ended}`;
    default:
      return `The session has ended. ${ended}`;
  }
}
