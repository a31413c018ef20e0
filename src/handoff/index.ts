export { type BriefParts, composeBrief } from "./brief.ts";
export { linkHandoffs } from "./guard.ts";
export { HandoffAnswer, HandoffBody } from "./handoff.ts";
export { createHandoffRepo, type HandoffRepo } from "./repo.ts";
export {
  createHandoffService,
  type HandoffInput,
  type HandoffResult,
  type HandoffService,
} from "./service.ts";
