export * from "./entry.ts";
export {
  createMemoryService,
  type MemoryService,
  type MemorySettings,
  sessionPrefix,
  ttlOf,
} from "./service.ts";
