export * from "./pipeline.ts";
export { createPipelineService, type PipelineService } from "./service.ts";
