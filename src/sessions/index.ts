export { createSessionRepo, type SessionRepo } from "./repo.ts";
export { createSessionService, type SessionService } from "./service.ts";
export * from "./session.ts";
