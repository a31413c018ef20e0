export * from "./consensus.ts";
export { type ConsensusService, createConsensusService } from "./service.ts";
