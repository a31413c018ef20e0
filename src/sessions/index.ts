export {
  createSessionRepo,
  type SessionPatch,
  type SessionRecord,
  type SessionRepo,
  toSession,
} from "./repo.ts";
export {
  createSessionService,
  type MemoryReader,
  type SessionDefaults,
  type SessionService,
  type TemplateReader,
} from "./service.ts";
export * from "./session.ts";
