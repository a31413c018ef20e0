export {
  createSessionRepo,
  type SessionPatch,
  type SessionRecord,
  type SessionRepo,
  toSession,
} from "./repo.ts";
export { createSessionService, type SessionService } from "./service.ts";
export * from "./session.ts";
