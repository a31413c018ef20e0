import type { HandoffPolicy } from "../config/schema.ts";
import type { CreateResult, Session, SessionService } from "../sessions/index.ts";
import type { HandoffRepo } from "./repo.ts";

/**
 * The session service with handoffs: a session shows the sessions a handoff links it to, and a
 * session created from a template with a handoff policy keeps that policy.
 */
export function linkHandoffs(
  inner: SessionService,
  deps: {
    repo: Pick<HandoffRepo, "links" | "setPolicy">;
    templatePolicy?: (templateId: string) => HandoffPolicy | undefined;
  },
): SessionService {
  const linked = (session: Session): Session => ({ ...session, ...deps.repo.links(session.id) });
  const created = (result: CreateResult): CreateResult => ({ ...result, session: linked(result.session) });
  return {
    ...inner,
    list: (query, owner) => inner.list(query, owner).map(linked),
    get: (id) => linked(inner.get(id)),
    async create(input, owner, options) {
      const result = await inner.create(input, owner, options);
      const policy = input.templateId ? deps.templatePolicy?.(input.templateId) : undefined;
      if (policy && result.created) deps.repo.setPolicy(result.session.id, policy);
      return created(result);
    },
    fork: async (id, owner) => created(await inner.fork(id, owner)),
    resume: async (id, owner) => created(await inner.resume(id, owner)),
  };
}
