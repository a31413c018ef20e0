import { expect, test } from "bun:test";
import { CLAUDE_PRICES as DEFAULT_PRICES } from "../../src/agents/claude/prices.ts";
import { estimateCost } from "../../src/sessions/pricing.ts";

const tokens = (input: number, output: number, cacheRead = 0, cacheCreation = 0) => ({
  input,
  output,
  cacheRead,
  cacheCreation,
});

test("cost from the price table: per million tokens, cache priced from input unless given", () => {
  const cost = estimateCost(
    { "claude-sonnet-4-5": tokens(1_000_000, 100_000, 2_000_000, 400_000) },
    DEFAULT_PRICES,
  );
  // 3 + 15*0.1 + 0.3*2 + 3.75*0.4
  expect(cost).toEqual({ usd: 3 + 1.5 + 0.6 + 1.5, unpriced: [] });
});

test("the most specific fragment wins; unknown models are listed, not guessed", () => {
  const cost = estimateCost(
    {
      "claude-opus-4-1-20250805": tokens(1_000_000, 0),
      "claude-opus-4-8": tokens(1_000_000, 0),
      "gpt-x": tokens(5, 5),
    },
    DEFAULT_PRICES,
  );
  expect(cost).toEqual({ usd: 15 + 5, unpriced: ["gpt-x"] });
});

test("a configured price table overrides", () => {
  expect(
    estimateCost({ "my-model": tokens(2_000_000, 0) }, { "my-model": { input: 0.5, output: 1 } }).usd,
  ).toBe(1);
});
