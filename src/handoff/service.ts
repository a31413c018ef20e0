import type { HandoffPolicy, HandoffTrigger } from "../config/schema.ts";
import type { EventBus } from "../events/bus.ts";
import type { CreateResult, Owner, Session, SessionService } from "../sessions/index.ts";
import { isTerminal } from "../sessions/index.ts";
import type { Clock } from "../shared/clock.ts";
import { AgError, describeError } from "../shared/errors.ts";
import type { Logger } from "../shared/log.ts";
import type { TenantUsers } from "../shared/run-as.ts";
import { composeBrief } from "./brief.ts";
import { createBriefReader } from "./reading.ts";
import type { HandoffRepo } from "./repo.ts";

export interface HandoffInput {
  agent: string;
  driver?: Session["driver"];
  note?: string;
}

export type Trigger = "manual" | HandoffTrigger;

export interface HandoffDeps {
  repo: HandoffRepo;
  /** The guarded sessions (budgets apply to the new session too). */
  sessions: Pick<SessionService, "get" | "create" | "cursor" | "summary">;
  bus: EventBus;
  clock: Clock;
  logger: Logger;
  /** The server's policy (config `handoff`); a session's own (its template's) goes over it. */
  policy: HandoffPolicy;
  /** A tenant's runAs user: git reads its folder as it. */
  owners?: TenantUsers;
}

export interface HandoffResult {
  from: Session;
  to: CreateResult;
  brief: string;
}

export function createHandoffService(deps: HandoffDeps) {
  const { repo } = deps;
  const reader = createBriefReader(deps);
  /** Sessions with a provider limit: since when, and the timer that hands them off. */
  const limited = new Map<string, { cancel: () => void }>();

  async function handoff(
    id: string,
    input: HandoffInput,
    owner?: Owner,
    trigger: Trigger = "manual",
  ): Promise<HandoffResult> {
    const from = deps.sessions.get(id);
    if (input.agent === from.agent)
      throw new AgError(
        "VALIDATION_ERROR",
        `session ${id} already runs ${from.agent}: hand it to another agent`,
      );
    const brief = composeBrief(await reader.parts(from, input.note ?? null, trigger));
    const to = await deps.sessions.create(
      {
        workDir: from.workDir,
        agent: input.agent,
        ...(input.driver ? { driver: input.driver } : {}),
        prompt: brief,
        reuse: false,
      },
      owner ?? ownerOf(from),
    );
    repo.link(from.id, to.session.id, trigger, brief, new Date(deps.clock.now()).toISOString());
    const policy = repo.policy(from.id);
    if (policy) repo.setPolicy(to.session.id, policy);
    deps.bus.publish({
      event: "session.handoff",
      session: { id: from.id, name: from.name, workDir: from.workDir },
      detail: `session ${from.name} (${from.agent}) handed its task to ${to.session.name} (${input.agent}): ${trigger}`,
      meta: { from: from.id, to: to.session.id, agent: input.agent, trigger },
    });
    const linked = { ...to, session: { ...to.session, ...repo.links(to.session.id) } };
    return { from: { ...from, ...repo.links(from.id) }, to: linked, brief };
  }

  /** A handoff nobody asked for (a policy's) acts for the session's own tenant. */
  function ownerOf(session: Session): Owner | undefined {
    return session.tenantId ? { tenantId: session.tenantId } : undefined;
  }

  /** The policy that applies to a session: its own (its template's), else the server's. */
  function policyOf(id: string): HandoffPolicy {
    return repo.policy(id) ?? deps.policy;
  }

  /** The next agent of the policy's list that is not the session's own (null: none). */
  function nextAgent(session: Session, policy: HandoffPolicy): string | null {
    return policy.to.find((agent) => agent !== session.agent) ?? null;
  }

  /** Hands a session off by its policy, once, and says so (or why not) in the log. */
  async function byPolicy(id: string, trigger: HandoffTrigger): Promise<void> {
    limited.get(id)?.cancel();
    limited.delete(id);
    let session: Session;
    try {
      session = deps.sessions.get(id);
    } catch {
      return;
    }
    if (isTerminal(session.status) || repo.links(id).handedOffTo) return;
    const agent = nextAgent(session, policyOf(id));
    if (!agent) return;
    deps.logger.info(`handoff: session ${session.name} (${trigger}) goes to ${agent}`);
    await handoff(id, { agent }, undefined, trigger).catch((error) =>
      deps.logger.warn(
        `handoff: session ${session.name} could not be handed to ${agent}: ${describeError(error)}`,
      ),
    );
  }

  /**
   * A provider limit: once it has lasted `afterMs`, the session is handed off if the last thing its
   * provider gave it is still an error (the agent's own retries may still run: then it looks again
   * after `afterMs`); a reply since the limit ends the watch.
   */
  function onLimit(id: string, detail: string): void {
    const trigger: HandoffTrigger = /usage limit|quota|credit/i.test(detail) ? "usage_limit" : "rate_limit";
    const policy = policyOf(id);
    if (!policy.on.includes(trigger) || limited.has(id)) return;
    const since = deps.clock.now();
    const afterMs = policy.afterMs ?? 0;
    const check = async (): Promise<void> => {
      const outcome = await stillLimited(id, since);
      if (outcome === "limited") return byPolicy(id, trigger);
      if (outcome === "replied") {
        limited.delete(id);
        return;
      }
      if (limited.has(id))
        limited.set(id, { cancel: deps.clock.setTimer(() => void check(), afterMs || 1_000) });
    };
    limited.set(id, { cancel: deps.clock.setTimer(() => void check(), afterMs) });
  }

  /** The newest answer of the session's provider: still an error, a reply since `since`, or none yet. */
  async function stillLimited(id: string, since: number): Promise<"limited" | "replied" | "waiting"> {
    const page = await deps.sessions.cursor(id, { role: "assistant", limit: 20 }).catch(() => null);
    const last = page?.messages.filter((m) => m.kind === "api_error" || m.kind === "text").at(-1);
    if (!last) return "waiting";
    if (last.kind === "api_error") return "limited";
    const at = last.timestamp ? Date.parse(last.timestamp) : Number.NaN;
    return !Number.isNaN(at) && at >= since ? "replied" : "waiting";
  }

  const unsubscribe = deps.bus.subscribe((event) => {
    const id = event.session?.id;
    if (!id) return;
    if (event.event === "status.rate_limited") onLimit(id, event.detail);
    else if (event.event === "session.ended") {
      limited.get(id)?.cancel();
      limited.delete(id);
    } else if (
      event.event === "budget.reached" &&
      event.meta.budget === "session" &&
      policyOf(id).on.includes("budget")
    ) {
      void byPolicy(id, "budget");
    }
  });

  return {
    handoff,
    links: (id: string) => repo.links(id),
    /** A session's own policy (from its template), over the server's. */
    setPolicy: (id: string, policy: HandoffPolicy) => repo.setPolicy(id, policy),
    close() {
      unsubscribe();
      for (const { cancel } of limited.values()) cancel();
      limited.clear();
    },
  };
}

export type HandoffService = ReturnType<typeof createHandoffService>;
