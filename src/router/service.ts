import type { Config } from "../config/schema.ts";
import { scoreTask, TIER_RANGES } from "./score.ts";
import type { ModelTiers, RouteResult, RouteTaskInput, Tier } from "./task.ts";

export type TierModels = Readonly<Record<Tier, string>>;

export interface RouterService {
  /** Suggests a tier and model for a task. It only suggests: no session's model changes. */
  route(input: RouteTaskInput): RouteResult;
  tiers(): ModelTiers;
}

/** The configured model of each tier (MODEL_FAST, MODEL_STANDARD, MODEL_POWER). */
export function tierModels(config: Pick<Config, "modelFast" | "modelStandard" | "modelPower">): TierModels {
  return { fast: config.modelFast, standard: config.modelStandard, power: config.modelPower };
}

export function createRouterService(deps: { models: TierModels }): RouterService {
  return {
    route(input) {
      const { score, tier, reasoning } = scoreTask([
        input.title,
        ...(input.labels ?? []),
        input.description ?? "",
      ]);
      return { tier, model: deps.models[tier], score, reasoning };
    },
    tiers() {
      return {
        tiers: TIER_RANGES.map(({ tier, min, max }) => ({
          tier,
          model: deps.models[tier],
          range: { min, max },
        })),
      };
    },
  };
}
