export * from "./entry.ts";
export {
  createMemoryService,
  type MemoryService,
  type MemorySettings,
  mayUseMemory,
  sessionPrefix,
  ttlOf,
} from "./service.ts";
