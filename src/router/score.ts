import type { Tier } from "./task.ts";

/**
 * The router's scoring, pure (CONTRACT §6): score = clamp(50 + 25·P + 5·S − 25·F, 0, 100), where
 * P, S and F count the DISTINCT power, standard and fast keywords found in any of the texts.
 */

export const KEYWORDS: Readonly<Record<Tier, readonly string[]>> = {
  power: [
    "security",
    "auth",
    "architecture",
    "migration",
    "critical",
    "vulnerability",
    "concurrency",
    "breaking change",
  ],
  standard: ["feature", "refactor", "test", "coverage", "api", "performance", "optimization"],
  fast: ["typo", "docs", "label", "rename", "bump", "chore", "formatting", "readme"],
};

const BASE = 50;
const WEIGHT: Readonly<Record<Tier, number>> = { power: 25, standard: 5, fast: -25 };

/** Inclusive score ranges, low to high; they cover 0–100 without gaps. */
export const TIER_RANGES: ReadonlyArray<{ tier: Tier; min: number; max: number }> = [
  { tier: "fast", min: 0, max: 30 },
  { tier: "standard", min: 31, max: 70 },
  { tier: "power", min: 71, max: 100 },
];

export interface Score {
  score: number;
  tier: Tier;
  /** `<tier> keyword: "<word>"` per distinct keyword, power first, each tier in KEYWORDS order. */
  reasoning: string[];
}

const ORDER: readonly Tier[] = ["power", "standard", "fast"];

/**
 * A word is a run of letters and digits, so `auth-service`, `type:docs` and `fix_typo` contain a
 * keyword, while `testing` or `authority` do not. The last word may take its regular plural
 * (`tests`, `typos`, `breaking changes`, `vulnerabilities`): SPEC itself describes the tiers in
 * plurals, and an issue titled "Add tests" is test work. Words of a phrase are separated by any
 * whitespace.
 */
function keywordPattern(keyword: string): RegExp {
  const words = keyword.split(" ").map((word) => word.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"));
  const last = words.pop()!;
  const plural = last.endsWith("y") ? `(?:${last}|${last.slice(0, -1)}ies)` : `${last}(?:e?s)?`;
  return new RegExp(`(?<![\\p{L}\\p{N}])${[...words, plural].join("\\s+")}(?![\\p{L}\\p{N}])`, "iu");
}

const PATTERNS = ORDER.flatMap((tier) =>
  KEYWORDS[tier].map((keyword) => ({ tier, keyword, pattern: keywordPattern(keyword) })),
);

/**
 * Scores a task from its texts. Each text is searched on its own, so two labels never join into
 * one phrase ("breaking" + "change").
 */
export function scoreTask(texts: readonly string[]): Score {
  const matched = PATTERNS.filter(({ pattern }) => texts.some((text) => pattern.test(text)));
  const raw = matched.reduce((sum, { tier }) => sum + WEIGHT[tier], BASE);
  const score = Math.min(100, Math.max(0, raw));
  return {
    score,
    tier: tierOf(score),
    reasoning: matched.map(({ tier, keyword }) => `${tier} keyword: "${keyword}"`),
  };
}

export function tierOf(score: number): Tier {
  return TIER_RANGES.find((range) => score <= range.max)?.tier ?? "power";
}
