import { AgError } from "../shared/errors.ts";
import type { SessionRepo } from "./repo.ts";
import type { Session, SessionListQuery, SessionStats } from "./session.ts";

/**
 * The session operations the API offers. This first slice reads what the store holds; the
 * lifecycle (create, send, kill …) joins it with the tmux and agent layers.
 */
export interface SessionService {
  list(query?: SessionListQuery): Session[];
  get(id: string): Session;
  stats(): SessionStats;
}

export function createSessionService(deps: { repo: SessionRepo }): SessionService {
  return {
    list: (query) => deps.repo.list(query),
    get(id) {
      const session = deps.repo.get(id);
      if (!session) throw new AgError("SESSION_NOT_FOUND", `no session ${id}`);
      return session;
    },
    stats: () => deps.repo.stats(),
  };
}
