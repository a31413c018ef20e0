import { NO_TOKENS, type TokenCounts } from "./vocabulary.ts";

/**
 * Token totals of an agent's messages, each counted once by its id with its largest figures: a
 * message's usage may be written on several of its lines, and a smaller count first. The ids of
 * the last `recent` messages are kept (lines of one message sit close together).
 */
export interface UsageTally {
  add(messageId: string, model: string | null, tokens: TokenCounts): void;
  tokens(): TokenCounts;
  tokensByModel(): Record<string, TokenCounts>;
}

const KEYS = ["input", "output", "cacheRead", "cacheCreation"] as const;

export function createUsageTally(recent = 10_000): UsageTally {
  const totals = { ...NO_TOKENS };
  const byModel: Record<string, TokenCounts> = {};
  const byId = new Map<string, { model: string | null; tokens: TokenCounts }>();
  return {
    add(messageId, model, tokens) {
      const seen = byId.get(messageId);
      const previous = seen?.tokens ?? NO_TOKENS;
      const merged = { ...previous };
      for (const key of KEYS) merged[key] = Math.max(previous[key], tokens[key]);
      const owner = seen?.model ?? model;
      byId.delete(messageId); // re-inserted: the Map's order is then recency
      byId.set(messageId, { model: owner, tokens: merged });
      if (byId.size > recent) byId.delete(byId.keys().next().value!);
      if (owner) byModel[owner] ??= { ...NO_TOKENS };
      for (const key of KEYS) {
        totals[key] += merged[key] - previous[key];
        if (owner) byModel[owner]![key] += merged[key] - previous[key];
      }
    },
    tokens: () => ({ ...totals }),
    tokensByModel: () => Object.fromEntries(Object.entries(byModel).map(([m, t]) => [m, { ...t }])),
  };
}
