export { KEYWORDS, type Score, scoreTask, TIER_RANGES, tierOf } from "./score.ts";
export { createRouterService, type RouterService, type TierModels, tierModels } from "./service.ts";
export {
  MAX_DESCRIPTION,
  MAX_LABEL,
  MAX_LABELS,
  MAX_TITLE,
  ModelTiers,
  RouteResult,
  RouteTaskInput,
  Tier,
} from "./task.ts";
