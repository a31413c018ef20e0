import { createHash, timingSafeEqual } from "node:crypto";
import type { AgentAdapter } from "../../agents/agent.ts";
import type { DiagnosticsSink } from "../../diagnostics/index.ts";
import { AgError } from "../../shared/errors.ts";
import type { Logger } from "../../shared/log.ts";
import type { LiveSessions } from "../live/registry.ts";
import type { SessionRepo } from "../repo.ts";
import type { PermissionPolicy } from "../session.ts";

/** The header that carries a session's hook secret. */
export const HOOK_SECRET_HEADER = "X-Svc-Hook-Secret";

/**
 * Agent hook callbacks. Each session has its own secret, sent by the agent in a header (never
 * in the URL); the bearer token plays no part here. ag never allows anything on the user's
 * behalf: the answer is "no decision" (`{}`), so the agent's own permission prompt appears as the
 * user configured it — except a refusal, when the session's permission policy forbids the tool.
 */
export interface HookReceiver {
  receive(event: string, secret: string | null, payload: Record<string, unknown>): Record<string, unknown>;
}

export function createHookReceiver(deps: {
  repo: Pick<SessionRepo, "get">;
  live: Pick<LiveSessions, "get" | "all">;
  agent: Pick<AgentAdapter, "hookEvents" | "policy" | "readHook">;
  logger: Logger;
  diagnostics?: DiagnosticsSink;
}): HookReceiver {
  const known = new Set(deps.agent.hookEvents);

  /** The agent's refusal when the session's policy forbids the tool; null = no decision. */
  function refuse(event: string, payload: Record<string, unknown>, policy: PermissionPolicy | null) {
    if (!policy) return null;
    const tool = deps.agent.policy.tool(event, payload);
    if (!tool || tool.category === "other") return null;
    const allowed = { read: policy.allowRead, write: policy.allowWrite, bash: policy.allowBash }[
      tool.category
    ];
    if (allowed) return null;
    const reason = `ag's ${policy.profile} permission policy for this session does not allow ${tool.category} tools (${tool.name})`;
    const reply = deps.agent.policy.deny(event, reason);
    return reply ? { tool: tool.name, reply } : null;
  }

  const receiver: HookReceiver = {
    receive(event, secret, payload) {
      if (!known.has(event)) throw new AgError("NOT_FOUND", `unknown hook event ${event}`);
      const named = typeof payload.session_id === "string" ? deps.repo.get(payload.session_id) : null;
      // The secret says whose hook it is: the agent may run under another conversation id than
      // ag gave it (`/clear` starts a new one), and a hook naming a session must carry its secret.
      const record =
        secret === null
          ? null
          : named && sameSecret(secret, named.hookSecret)
            ? named
            : (deps.live
                .all()
                .map((s) => s.record())
                .find((r) => sameSecret(secret, r.hookSecret)) ?? null);
      if (!record) {
        deps.logger.warn(`rejected ${event} hook: unknown session or wrong secret`);
        deps.diagnostics?.record("hook.rejected", `${event} hook: unknown session or wrong secret`);
        throw new AgError("UNAUTHORIZED", "invalid hook secret");
      }
      const sessionId = record.id;
      const live = deps.live.get(sessionId);
      // Every payload names the transcript file: the surest way to find it.
      const transcriptPath = payload.transcript_path;
      if (live && typeof transcriptPath === "string" && transcriptPath !== live.transcript.path) {
        void live.attachTranscript(transcriptPath, false);
      }
      const refusal = refuse(event, payload, record.permissions);
      if (refusal) {
        deps.logger.info(`denied ${refusal.tool} for session ${sessionId} (permission policy)`);
        return refusal.reply;
      }
      const observation = deps.agent.readHook(event, payload);
      if (observation) live?.observe(observation, "hook");
      return {};
    },
  };
  return receiver;
}

function sameSecret(presented: string, expected: string): boolean {
  const a = createHash("sha256").update(presented).digest();
  const b = createHash("sha256").update(expected).digest();
  return timingSafeEqual(a, b);
}
