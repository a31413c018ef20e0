import { createHash, timingSafeEqual } from "node:crypto";
import type { AgentAdapter } from "../agents/agent.ts";
import { AgError } from "../shared/errors.ts";
import type { Logger } from "../shared/log.ts";
import type { SessionRepo } from "./repo.ts";
import type { SessionService } from "./service.ts";

/** The header that carries a session's hook secret. */
export const HOOK_SECRET_HEADER = "X-Svc-Hook-Secret";

/**
 * Agent hook callbacks. Each session has its own secret, sent by the agent in a header (never
 * in the URL); the bearer token plays no part here. The answer is always "no decision" (`{}`):
 * ag never allows anything on the user's behalf, so the agent's own permission prompt appears
 * as the user configured it.
 */
export interface HookReceiver {
  receive(event: string, secret: string | null, payload: Record<string, unknown>): Record<string, unknown>;
}

export function createHookReceiver(deps: {
  repo: SessionRepo;
  sessions: SessionService;
  agent: AgentAdapter;
  logger: Logger;
}): HookReceiver {
  const known = new Set(deps.agent.hookEvents);
  return {
    receive(event, secret, payload) {
      if (!known.has(event)) throw new AgError("NOT_FOUND", `unknown hook event ${event}`);
      const sessionId = typeof payload.session_id === "string" ? payload.session_id : "";
      const record = sessionId ? deps.repo.get(sessionId) : null;
      if (!record || secret === null || !sameSecret(secret, record.hookSecret)) {
        deps.logger.warn(`rejected ${event} hook: unknown session or wrong secret`);
        throw new AgError("UNAUTHORIZED", "invalid hook secret");
      }
      const live = deps.sessions.all().find((s) => s.id === sessionId);
      // Every payload names the transcript file: the surest way to find it.
      const transcriptPath = payload.transcript_path;
      if (live && typeof transcriptPath === "string" && transcriptPath !== live.transcript.path) {
        void live.attachTranscript(transcriptPath, false);
      }
      const observation = deps.agent.readHook(event, payload);
      if (observation) live?.observe(observation, "hook");
      return {};
    },
  };
}

function sameSecret(presented: string, expected: string): boolean {
  const a = createHash("sha256").update(presented).digest();
  const b = createHash("sha256").update(expected).digest();
  return timingSafeEqual(a, b);
}
