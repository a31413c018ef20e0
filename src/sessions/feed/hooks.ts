import { createHash, timingSafeEqual } from "node:crypto";
import type { AgentAdapter } from "../../agents/agent.ts";
import type { AgentRegistry } from "../../agents/registry.ts";
import type { DiagnosticsSink } from "../../diagnostics/index.ts";
import { AgError } from "../../shared/errors.ts";
import type { Logger } from "../../shared/log.ts";
import type { LiveSessions } from "../live/registry.ts";
import { policyRefusal } from "../policy.ts";
import type { SessionRecord, SessionRepo } from "../repo.ts";
import type { PermissionPolicy } from "../session.ts";

export { HOOK_SECRET_HEADER } from "../../agents/vocabulary.ts";

/**
 * Agent hook callbacks. Each session has its own secret, sent by the agent in a header (never
 * in the URL); the bearer token plays no part here. ag never allows anything on the user's
 * behalf: the answer is "no decision" (`{}`), so the agent's own permission prompt appears as the
 * user configured it — except a refusal, when the session's permission policy forbids the tool.
 */
export interface HookReceiver {
  /** One callback of an agent (`/v1/hooks/:agent/:event`). */
  receive(
    agent: string,
    event: string,
    secret: string | null,
    payload: Record<string, unknown>,
  ): Record<string, unknown>;
}

export function createHookReceiver(deps: {
  repo: Pick<SessionRepo, "get">;
  live: Pick<LiveSessions, "get" | "all">;
  agents: Pick<AgentRegistry, "get">;
  logger: Logger;
  diagnostics?: DiagnosticsSink;
}): HookReceiver {
  /** The agent's refusal when the session's policy forbids the tool; null = no decision. */
  function refuse(
    agent: AgentAdapter,
    event: string,
    payload: Record<string, unknown>,
    policy: PermissionPolicy | null,
  ) {
    if (!policy) return null;
    const tool = agent.policy.tool(event, payload);
    const reason = tool && policyRefusal(policy, tool);
    if (!tool || !reason) return null;
    const reply = agent.policy.deny(event, reason);
    return reply ? { tool: tool.name, reply } : null;
  }

  /**
   * The session a hook belongs to, by its secret. The agent may run under another conversation
   * id than ag gave it (`/clear` starts a new one), and a hook naming a session must carry its
   * secret; a session of another agent is not this one's.
   */
  function sessionOf(agentId: string, event: string, secret: string, payload: Record<string, unknown>) {
    let named: SessionRecord | null = null;
    try {
      const conversationId = deps.agents.get(agentId).hooks.read(event, payload).conversationId;
      named = conversationId ? deps.repo.get(conversationId) : null;
    } catch {
      // an unknown agent names no session
    }
    const record =
      named && sameSecret(secret, named.hookSecret)
        ? named
        : (deps.live
            .all()
            .map((s) => s.record())
            .find((r) => sameSecret(secret, r.hookSecret)) ?? null);
    return record?.agent === agentId ? record : null;
  }

  const receiver: HookReceiver = {
    receive(agentId, event, secret, payload) {
      // Whose hook it is comes first: nothing about agents or events is told to a stranger.
      const record = secret === null ? null : sessionOf(agentId, event, secret, payload);
      if (!record) {
        deps.logger.warn(`rejected ${event} hook: unknown session or wrong secret`);
        deps.diagnostics?.record("hook.rejected", `${event} hook: unknown session or wrong secret`);
        throw new AgError("UNAUTHORIZED", "invalid hook secret");
      }
      // Read as the session's own version of the agent (which session it is, by the plain one).
      const agent = deps.agents.get(agentId, record.agentVersion);
      if (!agent.hooks.events.includes(event))
        throw new AgError("NOT_FOUND", `unknown hook event ${event} of agent ${agentId}`);
      const reading = agent.hooks.read(event, payload);
      const sessionId = record.id;
      const live = deps.live.get(sessionId);
      // A payload that names the transcript file gives the surest way to find it.
      const { transcriptPath, observation } = reading;
      if (live && transcriptPath !== undefined && transcriptPath !== live.transcript.path) {
        void live.attachTranscript(transcriptPath, false);
      }
      const refusal = refuse(agent, event, payload, record.permissions);
      if (refusal) {
        deps.logger.info(`denied ${refusal.tool} for session ${sessionId} (permission policy)`);
        return refusal.reply;
      }
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
