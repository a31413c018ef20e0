import { addTokens, NO_TOKENS, type Price, type PriceTable, type TokenCounts } from "../agents/vocabulary.ts";

export type { Price, PriceTable } from "../agents/vocabulary.ts";

export type Tokens = TokenCounts;

export interface CostEstimate {
  usd: number;
  /**
   * Models whose name matched no price: priced by the fallback when one is given (flagged, never
   * silently free), else not in `usd`.
   */
  unpriced: string[];
}

/** Token counts added up. */
export function sumTokens(all: readonly Tokens[]): Tokens {
  return all.reduce<Tokens>((total, t) => addTokens(total, t), { ...NO_TOKENS });
}

export function estimateCost(
  byModel: Record<string, Tokens>,
  table: PriceTable,
  fallback?: Price,
): CostEstimate {
  let usd = 0;
  const unpriced: string[] = [];
  for (const [model, tokens] of Object.entries(byModel)) {
    const key = Object.keys(table).find((fragment) => model.toLowerCase().includes(fragment.toLowerCase()));
    if (!key) unpriced.push(model);
    const price = key ? table[key]! : fallback;
    if (!price) continue;
    usd +=
      (tokens.input * price.input +
        tokens.output * price.output +
        tokens.cacheRead * (price.cacheRead ?? price.input / 10) +
        tokens.cacheCreation * (price.cacheCreation ?? price.input * 1.25)) /
      1_000_000;
  }
  return { usd: Math.round(usd * 1_000_000) / 1_000_000, unpriced };
}
