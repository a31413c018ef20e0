export * from "./entry.ts";
export {
  createMemoryService,
  type MemoryService,
  type MemorySettings,
  sessionPrefix,
  tenantMayUse,
  ttlOf,
} from "./service.ts";
