import type { PriceTable } from "../vocabulary.ts";

/**
 * Claude models' prices by name fragment (more specific keys first). Cache reads default to a
 * tenth of the input price and cache writes to 1.25 times it. Prices change: `pricing` in the
 * config file overrides or adds keys.
 */
export const CLAUDE_PRICES: PriceTable = {
  "opus-4-1": { input: 15, output: 75 },
  "opus-4-0": { input: 15, output: 75 },
  opus: { input: 5, output: 25 },
  sonnet: { input: 3, output: 15 },
  haiku: { input: 1, output: 5 },
};
