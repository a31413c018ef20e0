import type { BudgetInput, CreateResult, Session, SessionService } from "../sessions/index.ts";
import type { BudgetService } from "./service.ts";

/**
 * The session service as every surface (REST, MCP, chat, pipelines) reaches it, with budgets:
 * a session shows its budget, a create takes one (or its template's), and a prompt to a paused
 * session is refused with BUDGET_REACHED before anything is typed.
 */
export function guardSessions(
  inner: SessionService,
  deps: {
    budgets: Pick<BudgetService, "view" | "attach" | "admit">;
    /** A template's budget (templates store one like any other field). */
    templateBudget?: (templateId: string) => BudgetInput | undefined;
  },
): SessionService {
  const { budgets } = deps;
  const withBudget = (session: Session): Session => ({ ...session, budget: budgets.view(session.id) });
  const created = (result: CreateResult): CreateResult => ({
    ...result,
    session: withBudget(result.session),
  });

  /** Whether a session paused by its budget waits idle in `workDir` (a reuse would pick it). */
  function pausedIn(workDir: string | undefined, owner: Parameters<SessionService["list"]>[1]): boolean {
    if (workDir === undefined) return false;
    return inner
      .list({ status: "idle", workDir }, owner)
      .some((s) => s.workDir === workDir && budgets.view(s.id)?.state === "reached");
  }

  return {
    ...inner,
    list: (query, owner) => inner.list(query, owner).map(withBudget),
    get: (id) => withBudget(inner.get(id)),
    async create(input, owner, options) {
      const { budget, ...rest } = input;
      const asked = budget ?? (input.templateId ? deps.templateBudget?.(input.templateId) : undefined);
      // A paused session never takes a prompt by reuse: the prompt starts a new session instead.
      const reuse = rest.reuse === false || !pausedIn(rest.workDir, owner) ? rest.reuse : false;
      const result = await inner.create(reuse === undefined ? rest : { ...rest, reuse }, owner, options);
      if (asked) budgets.attach(result.session, asked);
      return created(result);
    },
    async send(id, text) {
      await budgets.admit(id, text);
      return inner.send(id, text);
    },
    fork: async (id, owner) => created(await inner.fork(id, owner)),
    resume: async (id, owner) => created(await inner.resume(id, owner)),
  };
}
