import type { PriceTable } from "../vocabulary.ts";

/**
 * OpenAI's list prices (USD per million tokens, standard tier, as published mid-2026) by model
 * name fragment, the more specific first: "gpt-5" would otherwise match every later GPT-5.x.
 * Cached input is a tenth of the input price; writing the cache costs nothing extra. Models not
 * listed here (the GPT-6 family had no published price when this was written) get no estimate:
 * `pricing` in the config adds them.
 */
const price = (input: number, output: number) => ({
  input,
  output,
  cacheRead: input / 10,
  cacheCreation: input,
});

export const CODEX_PRICES: PriceTable = {
  "gpt-5.6-sol": price(5, 30),
  "gpt-5.6-terra": price(2.5, 15),
  "gpt-5.6-luna": price(1, 6),
  "gpt-5.5-pro": price(30, 180),
  "gpt-5.5": price(5, 30),
  "gpt-5.4-pro": price(30, 180),
  "gpt-5.4-mini": price(0.75, 4.5),
  "gpt-5.4-nano": price(0.2, 1.25),
  "gpt-5.4": price(2.5, 15),
  "gpt-5.3-codex": price(1.75, 14),
  "gpt-5.2": price(1.75, 14),
  "gpt-5.1": price(1.25, 10),
  "gpt-5-mini": price(0.25, 2),
  "gpt-5-nano": price(0.05, 0.4),
  "gpt-5": price(1.25, 10),
};
