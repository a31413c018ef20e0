import type { PriceTable } from "../vocabulary.ts";

/**
 * Gemini models' prices by name fragment (more specific keys first), the standard tier for
 * prompts up to 200k tokens (longer prompts cost more on the Pro models). Cache reads are a
 * tenth of the input price; Gemini bills no cache writes by the token. Prices change: `pricing`
 * in the config file overrides or adds keys.
 */
export const GEMINI_PRICES: PriceTable = {
  "gemini-2.5-flash-lite": { input: 0.1, output: 0.4 },
  "gemini-2.5-flash": { input: 0.3, output: 2.5 },
  "gemini-2.5-pro": { input: 1.25, output: 10 },
  "gemini-3-flash": { input: 0.5, output: 3 },
  "gemini-3-pro": { input: 2, output: 12 },
  "gemini-2.0-flash-lite": { input: 0.075, output: 0.3 },
  "gemini-2.0-flash": { input: 0.1, output: 0.4 },
};
