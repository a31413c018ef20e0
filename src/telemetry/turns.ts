import {
  type Context,
  context,
  ROOT_CONTEXT,
  type Span,
  SpanKind,
  SpanStatusCode,
  trace,
} from "@opentelemetry/api";
import type { TokenCounts } from "../agents/vocabulary.ts";
import type { EventBus } from "../events/bus.ts";
import { tracer } from "./index.ts";

/**
 * Agent work as traces (docs/telemetry.md): each turn of an agent a span, from the state's turn
 * start to `session.turn_ended`, its tool calls child spans (the transcript's tool use to its
 * result), with the OpenTelemetry GenAI attributes and the turn's tokens (the session's
 * de-duplicated totals, as /metrics counts them: their growth over the turn). A turn whose prompt
 * ag typed is a child of that delivery's span, so POST /send → session.deliver → the turn → its
 * tools is one trace.
 */

/** Token totals of a session now. */
export type TurnTokens = TokenCounts;

/** How long after the turn's end its tokens are read: the transcript's last lines come late. */
const TOKENS_SETTLE_MS = 1_500;
/** A prompt's context is a turn's parent only if the turn starts this soon after the delivery. */
const PARENT_WITHIN_MS = 30_000;

const promptContexts = new Map<string, { ctx: Context; at: number }>();

/** Called inside a prompt's delivery span: the turn it starts will be its child. */
export function rememberPromptContext(sessionId: string): void {
  if (!trace.getSpan(context.active())) return;
  promptContexts.set(sessionId, { ctx: context.active(), at: Date.now() });
}

interface OpenTurn {
  span: Span;
  ctx: Context;
  tokens: TurnTokens | null;
  tools: Map<string, Span>;
}

export function traceAgentTurns(deps: {
  bus: Pick<EventBus, "subscribe">;
  /** The session's token totals now (null once it is gone). */
  tokens(sessionId: string): TurnTokens | null;
  /** The agent a session runs: its name (gen_ai.agent.name) and provider (null once it is gone). */
  agentOf(sessionId: string): { name: string; provider: string } | null;
}): () => void {
  const turns = new Map<string, OpenTurn>();

  function start(sessionId: string, at: number): OpenTurn {
    const remembered = promptContexts.get(sessionId);
    promptContexts.delete(sessionId);
    const parent = remembered && at - remembered.at < PARENT_WITHIN_MS ? remembered.ctx : ROOT_CONTEXT;
    const agent = deps.agentOf(sessionId) ?? { name: "unknown", provider: "unknown" };
    const span = tracer.startSpan(
      `invoke_agent ${agent.name}`,
      {
        kind: SpanKind.INTERNAL,
        startTime: at,
        attributes: {
          "gen_ai.operation.name": "invoke_agent",
          "gen_ai.agent.name": agent.name,
          "gen_ai.provider.name": agent.provider,
          "ag.session.id": sessionId,
        },
      },
      parent,
    );
    const turn = { span, ctx: trace.setSpan(parent, span), tokens: deps.tokens(sessionId), tools: new Map() };
    turns.set(sessionId, turn);
    return turn;
  }

  function finish(sessionId: string, at: number, reason: string): void {
    const turn = turns.get(sessionId);
    if (!turn) return;
    turns.delete(sessionId);
    for (const tool of turn.tools.values()) tool.end(at);
    turn.span.setAttribute("ag.turn.end", reason);
    if (reason === "failed") turn.span.setStatus({ code: SpanStatusCode.ERROR });
    const settle = setTimeout(() => {
      const now = deps.tokens(sessionId);
      if (turn.tokens && now) {
        turn.span.setAttributes({
          "gen_ai.usage.input_tokens": now.input - turn.tokens.input,
          "gen_ai.usage.output_tokens": now.output - turn.tokens.output,
          "ag.tokens.cache_read": now.cacheRead - turn.tokens.cacheRead,
          "ag.tokens.cache_creation": now.cacheCreation - turn.tokens.cacheCreation,
        });
      }
      turn.span.end(at);
    }, TOKENS_SETTLE_MS);
    settle.unref?.();
  }

  return deps.bus.subscribe((event) => {
    const sessionId = event.session?.id;
    if (!sessionId) return;
    const at = Date.parse(event.timestamp) || Date.now();
    switch (event.event) {
      case "session.working":
        if (!turns.has(sessionId)) start(sessionId, at);
        return;
      case "message.tool_use": {
        const turn = turns.get(sessionId);
        if (!turn || turn.tools.has(event.meta.toolUseId)) return;
        const span = tracer.startSpan(
          `execute_tool ${event.meta.tool}`,
          {
            kind: SpanKind.INTERNAL,
            startTime: at,
            attributes: {
              "gen_ai.operation.name": "execute_tool",
              "gen_ai.tool.name": event.meta.tool,
              "gen_ai.tool.call.id": event.meta.toolUseId,
            },
          },
          turn.ctx,
        );
        turn.tools.set(event.meta.toolUseId, span);
        return;
      }
      case "message.tool_result": {
        const span = turns.get(sessionId)?.tools.get(event.meta.toolUseId);
        if (!span) return;
        turns.get(sessionId)?.tools.delete(event.meta.toolUseId);
        if (event.meta.isError) span.setStatus({ code: SpanStatusCode.ERROR });
        span.end(at);
        return;
      }
      case "session.turn_ended":
        finish(sessionId, at, event.meta.reason);
        return;
      case "session.ended":
        finish(sessionId, at, "session ended");
        promptContexts.delete(sessionId);
        return;
      default:
        return;
    }
  });
}
