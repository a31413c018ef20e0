import type * as acp from "@agentclientprotocol/sdk";
import type { TokenCounts } from "../../agents/vocabulary.ts";

/**
 * What ACP itself says of tokens and models, for agents that report them the protocol's way
 * (an adapter's own `usage` reading goes first: Gemini CLI's `_meta.quota`).
 */

/** The `usage` of a `session/prompt` response (ACP v1 has it as unstable: `Usage`). */
interface ProtocolUsage {
  inputTokens?: number;
  outputTokens?: number;
  thoughtTokens?: number | null;
  cachedReadTokens?: number | null;
  cachedWriteTokens?: number | null;
}

/**
 * A turn's tokens from the response's `usage`, null when it has none or only zeros (a cancelled
 * turn). Thought tokens are counted as output, as providers bill them.
 */
export function protocolUsage(
  response: object,
  model: string | null,
): { model: string | null; tokens: TokenCounts } | null {
  const usage = (response as { usage?: ProtocolUsage | null }).usage;
  if (!usage || typeof usage !== "object") return null;
  const n = (value: unknown) => (typeof value === "number" && Number.isFinite(value) ? value : 0);
  const tokens: TokenCounts = {
    input: n(usage.inputTokens),
    output: n(usage.outputTokens) + n(usage.thoughtTokens),
    cacheRead: n(usage.cachedReadTokens),
    cacheCreation: n(usage.cachedWriteTokens),
  };
  return Object.values(tokens).some((v) => v > 0) ? { model, tokens } : null;
}

/** The session's model: the current value of its config option of category `model`, if any. */
export function modelOf(options: readonly acp.SessionConfigOption[] | null | undefined): string | null {
  const option = options?.find((o) => o.category === "model" && o.type === "select");
  return typeof option?.currentValue === "string" ? option.currentValue : null;
}
