/** The checkpoints domain's public face: a snapshot of a session's folder at every turn. */
export * from "./checkpoint.ts";
export { type CheckpointRepo, createCheckpointRepo } from "./repo.ts";
export {
  type CheckpointService,
  type CheckpointServiceDeps,
  type CheckpointSettings,
  createCheckpointService,
} from "./service.ts";
export { createSessionCheckpoints, type SessionCheckpoints } from "./sessions.ts";
export { createCheckpoints } from "./setup.ts";
