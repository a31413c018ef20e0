import type { HandoffPolicy, HandoffTrigger } from "../config/schema.ts";
import type { EventBus } from "../events/bus.ts";
import type { CreateResult, Owner, Session, SessionService } from "../sessions/index.ts";
import { isTerminal } from "../sessions/index.ts";
import type { Clock } from "../shared/clock.ts";
import { AgError, describeError } from "../shared/errors.ts";
import { git, isWorkTree } from "../shared/git.ts";
import type { Logger } from "../shared/log.ts";
import type { TenantUsers } from "../shared/run-as.ts";
import { type BriefParts, composeBrief } from "./brief.ts";
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

/** Entries read back from the end for "the last turns whole": the last two prompts and what followed. */
const LAST_TURNS = 2;
const PAGE = 200;
/** Pages read looking for the first prompt (a very long session's first prompt may be further back). */
const MAX_PAGES = 50;

export function createHandoffService(deps: HandoffDeps) {
  const { repo } = deps;
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
    const brief = composeBrief(await briefParts(from, input.note ?? null, trigger));
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

  async function briefParts(from: Session, note: string | null, trigger: Trigger): Promise<BriefParts> {
    const [prompts, recent, summary, changes] = await Promise.all([
      personPrompts(from.id),
      recentEntries(from.id),
      deps.sessions.summary(from.id).catch(() => null),
      changedFiles(from, []),
    ]);
    const touched = summary?.filesTouched ?? [];
    return {
      from: { id: from.id, name: from.name, agent: from.agent, workDir: from.workDir },
      trigger,
      note,
      task: prompts[0] ?? null,
      laterPrompts: prompts.slice(1),
      turns: summary?.turns ?? prompts.length,
      toolCallsByName: summary?.toolCallsByName ?? {},
      lastTurns: recent,
      changes: changes.files.length > 0 || touched.length === 0 ? changes : await changedFiles(from, touched),
      pending: from.pendingPermission,
    };
  }

  /** Every prompt a person gave the session, oldest first. */
  async function personPrompts(id: string): Promise<string[]> {
    const found: string[] = [];
    let before: number | undefined;
    for (let page = 0; page < MAX_PAGES; page++) {
      const got = await deps.sessions
        .cursor(id, { role: "user", limit: PAGE, ...(before ? { beforeId: before } : {}) })
        .catch(() => null);
      if (!got) break;
      found.unshift(...got.messages.filter((m) => m.kind === "prompt").map((m) => m.text));
      if (!got.has_more || got.oldest_id <= 1) break;
      before = got.oldest_id;
    }
    return found;
  }

  /** The last turns whole: from the last prompts on, every entry but thinking. */
  async function recentEntries(id: string): Promise<BriefParts["lastTurns"]> {
    const got = await deps.sessions.cursor(id, { limit: PAGE }).catch(() => null);
    if (!got) return [];
    const entries = got.messages.filter((m) => m.kind !== "thinking" && m.text.trim() !== "");
    const starts = entries.flatMap((m, i) => (m.kind === "prompt" ? [i] : []));
    const from = starts.length >= LAST_TURNS ? starts[starts.length - LAST_TURNS]! : 0;
    return entries.slice(from).map((m) => ({ role: m.role, kind: m.kind, text: m.text }));
  }

  /**
   * Files changed since the session began: in git, against its start commit (committed and not,
   * new files too); elsewhere, the files its transcript says it wrote.
   */
  async function changedFiles(from: Session, touched: readonly string[]): Promise<BriefParts["changes"]> {
    if (touched.length > 0)
      return { source: "the files its transcript says it wrote", files: [...touched], stat: null };
    const runAs = deps.owners?.(from.tenantId) ?? null;
    if (!(await isWorkTree(from.workDir, runAs)))
      return { source: "not a git repository", files: [], stat: null };
    const base = from.baseCommit ?? "HEAD";
    const run = (args: string[]) =>
      git(from.workDir, args, runAs).then((r) => (r?.code === 0 ? r.stdout : ""));
    const [names, untracked, stat] = await Promise.all([
      run(["diff", "--name-status", "--find-renames", base, "--"]),
      run(["ls-files", "--others", "--exclude-standard"]),
      run(["diff", "--stat", base, "--"]),
    ]);
    const files = [
      ...names
        .split("\n")
        .filter(Boolean)
        .map((line) => line.replace(/\t/g, " ")),
      ...untracked
        .split("\n")
        .filter(Boolean)
        .map((file) => `A ${file} (new, not in git yet)`),
    ];
    const source = from.baseCommit
      ? `git diff against ${from.baseCommit.slice(0, 12)}, the commit it started from`
      : "git diff against HEAD (its start commit is unknown)";
    return { source, files, stat: stat.trim() || null };
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
