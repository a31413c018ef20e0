import type { BudgetSettings } from "../config/schema.ts";
import type { EventBus } from "../events/bus.ts";
import type { BudgetInput, Session, SessionBudget, SessionService } from "../sessions/index.ts";
import { isTerminal } from "../sessions/index.ts";
import type { Clock } from "../shared/clock.ts";
import { AgError } from "../shared/errors.ts";
import type { Logger } from "../shared/log.ts";
import { type BudgetOverview, SCOPE_PATTERN, type ScopeBudget } from "./budget.ts";
import type { BudgetRepo, BudgetRow } from "./repo.ts";
import { createScopes } from "./scopes.ts";
import { type BudgetState, type Cap, describeCap, round, shareOf, standing, transition } from "./state.ts";

export interface BudgetDeps {
  repo: BudgetRepo;
  bus: EventBus;
  clock: Clock;
  logger: Logger;
  settings: BudgetSettings;
  /** The sessions as the domain serves them (not through the budget guard: raising delivers). */
  sessions: Pick<SessionService, "get" | "list" | "metrics" | "send" | "interrupt">;
  /** The session's page in the console (null: no console link). */
  link?: (sessionId: string) => string | null;
}

export interface BudgetService {
  /** A session's budget as its object shows it (null: ag has counted nothing of it yet). */
  view(sessionId: string): SessionBudget | null;
  /** Sets a session's own cap at create (from the request or its template). */
  attach(session: Session, input: BudgetInput): void;
  /** Refuses a prompt to a paused session (BUDGET_REACHED), holding it to deliver once when raised. */
  admit(sessionId: string, text: string): Promise<void>;
  /** Raises or clears a session's cap; a session no longer paused gets its held prompt once. */
  raise(sessionId: string, input: BudgetInput): Promise<SessionBudget>;
  /** Raises the budget that paused the session (its own, else its tenant's or the server's) by `usd`. */
  raiseBy(sessionId: string, usd: number): Promise<unknown>;
  /** "Stop here": the session stays paused and its held prompt is dropped. */
  stop(sessionId: string): SessionBudget;
  /** Sets a server or tenant budget over the config's (null: none); resumes what it paused. */
  setScope(scope: string, usd: number | null): Promise<ScopeBudget>;
  /** Counts what a session spent since the last count, and decides its state. */
  measure(sessionId: string): Promise<void>;
  overview(): BudgetOverview;
  /** Spend by turn: each increase counted at a turn's end. */
  turns(sessionId: string): Array<{ at: string; usd: number; tokens: number }>;
  close(): void;
}

export function createBudgetService(deps: BudgetDeps): BudgetService {
  const { repo, settings } = deps;
  const warnAt = settings.warnAt;
  /** One count at a time: a turn's end and a prompt's check never count the same spend twice. */
  let queue: Promise<unknown> = Promise.resolve();
  const serial = <T>(work: () => Promise<T>): Promise<T> => {
    const next = queue.then(work, work);
    queue = next.catch(() => {});
    return next;
  };
  const now = () => new Date(deps.clock.now()).toISOString();

  function rowOf(sessionId: string): BudgetRow {
    const found = repo.get(sessionId);
    if (found) return found;
    const session = deps.sessions.get(sessionId);
    return {
      sessionId,
      tenantId: session.tenantId,
      usd: null,
      tokens: null,
      spentUsd: 0,
      spentTokens: 0,
      unpriced: [],
      state: "ok",
      reachedBy: null,
      heldPrompt: null,
      interrupt: null,
    };
  }

  const scopes = createScopes({ repo, settings, clock: deps.clock });
  const { capsOf } = scopes;

  /** Whether any budget could pause this session (else a prompt needs no count first). */
  function capped(row: BudgetRow): boolean {
    return capsOf(row).some((c) => c.usd !== null || (c.tokens ?? null) !== null);
  }

  function toView(row: BudgetRow): SessionBudget {
    return {
      usd: row.usd,
      tokens: row.tokens,
      spentUsd: row.spentUsd,
      spentTokens: row.spentTokens,
      state: row.state,
      reachedBy: row.state === "reached" ? row.reachedBy : null,
      interruptAtCap: interrupts(row),
      heldPrompt: row.heldPrompt !== null,
      unpriced: row.unpriced,
    };
  }

  /** Decides a session's state from its budgets; says so on the bus when it changed. */
  async function evaluate(row: BudgetRow): Promise<BudgetRow> {
    const { state, by } = standing(capsOf(row), warnAt);
    const previous = row.state;
    const next: BudgetRow = { ...row, state, reachedBy: state === "reached" ? (by?.budget ?? null) : null };
    repo.save(next, now());
    const event = transition(previous, state);
    if (event) announce(event, next, by);
    if (state === "reached" && previous !== "reached") await interruptIfAsked(next);
    if (event === "budget.raised") await deliverHeld(next);
    return repo.get(next.sessionId) ?? next;
  }

  function announce(
    event: "budget.warning" | "budget.reached" | "budget.raised",
    row: BudgetRow,
    by: Cap | null,
  ): void {
    let session: Session;
    try {
      session = deps.sessions.get(row.sessionId);
    } catch {
      return; // pruned meanwhile
    }
    const cap = by ?? { budget: "session", usd: row.usd, spentUsd: row.spentUsd };
    const url = deps.link?.(row.sessionId) ?? null;
    const what = describeCap(cap);
    const detail =
      event === "budget.reached"
        ? `${what}: session ${session.name} is paused; raise the budget to resume (POST /v1/sessions/${session.id}/budget)`
        : event === "budget.warning"
          ? `${what}: past ${Math.round(warnAt * 100)} % of it`
          : `${what}: session ${session.name} may take prompts again`;
    deps.bus.publish({
      event,
      session: { id: session.id, name: session.name, workDir: session.workDir },
      detail,
      meta: {
        budget: cap.budget,
        usd: cap.usd,
        spentUsd: cap.spentUsd,
        share: cap.usd === null && (cap.tokens ?? null) === null ? 0 : round(shareOf(cap)),
        state: row.state,
        ...(url ? { url } : {}),
      },
    });
  }

  /** Whether a turn past the cap is interrupted: the session's own choice, else the server's. */
  function interrupts(row: BudgetRow): boolean {
    return row.interrupt ?? settings.interruptAtCap;
  }

  /** interruptAtCap: a turn that spends past the cap is stopped at once, not let finish. */
  async function interruptIfAsked(row: BudgetRow): Promise<void> {
    if (!interrupts(row)) return;
    const status = safeGet(row.sessionId)?.status;
    if (status !== "working" && status !== "stalled") return;
    await deps.sessions
      .interrupt(row.sessionId)
      .catch((error) => deps.logger.warn(`budget: interrupting session ${row.sessionId} failed`, error));
  }

  /** The prompt refused while paused, delivered once now that the budget allows it. */
  async function deliverHeld(row: BudgetRow): Promise<void> {
    if (row.heldPrompt === null) return;
    const text = row.heldPrompt;
    // Cleared before it is typed: whatever happens next, it is never delivered twice.
    repo.save({ ...row, heldPrompt: null }, now());
    const session = safeGet(row.sessionId);
    if (!session || isTerminal(session.status)) return;
    await deps.sessions
      .send(row.sessionId, text)
      .catch((error) =>
        deps.logger.warn(`budget: the held prompt of ${row.sessionId} was not delivered`, error),
      );
  }

  function safeGet(id: string): Session | null {
    try {
      return deps.sessions.get(id);
    } catch {
      return null;
    }
  }

  /** What the session spent since the last count: one spend row for the increase, then its state. */
  async function count(sessionId: string): Promise<BudgetRow | null> {
    const session = safeGet(sessionId);
    if (!session) return null;
    const metrics = await deps.sessions.metrics(sessionId).catch(() => null);
    const row = rowOf(sessionId);
    if (!metrics) return row;
    const spentUsd = metrics.estimatedCost.usd;
    const spentTokens = metrics.tokens.input + metrics.tokens.output;
    const addUsd = round(spentUsd - row.spentUsd);
    const addTokens = spentTokens - row.spentTokens;
    if (addUsd > 0 || addTokens > 0) {
      repo.addSpend(sessionId, session.tenantId, now(), Math.max(0, addUsd), Math.max(0, addTokens));
    }
    const counted = {
      ...row,
      tenantId: session.tenantId,
      spentUsd: Math.max(row.spentUsd, spentUsd),
      spentTokens: Math.max(row.spentTokens, spentTokens),
      unpriced: metrics.estimatedCost.unpriced,
    };
    repo.save(counted, now());
    return counted;
  }

  /** The live sessions a server or tenant budget covers, each decided again. */
  async function evaluateScope(tenantId: string | null | "*"): Promise<void> {
    for (const session of deps.sessions.list()) {
      if (isTerminal(session.status)) continue;
      if (tenantId !== "*" && session.tenantId !== tenantId) continue;
      await evaluate(rowOf(session.id));
    }
  }

  function measureNow(sessionId: string): Promise<void> {
    return serial(async () => {
      const row = await count(sessionId);
      if (!row) return;
      const shared = capsOf(row).some((c) => c.budget !== "session");
      // A server or tenant budget spent by this session pauses every session it covers.
      if (shared) await evaluateScope(scopes.hasServerCap() ? "*" : row.tenantId);
      else await evaluate(row);
    });
  }

  function raise(sessionId: string, input: BudgetInput): Promise<SessionBudget> {
    return serial(async () => {
      const row = rowOf(sessionId);
      const tokens = input.tokens === undefined ? row.tokens : input.tokens;
      const interrupt = input.interruptAtCap ?? row.interrupt;
      const set: BudgetRow = { ...row, usd: input.usd, tokens, interrupt };
      repo.save(set, now());
      return toView(await evaluate(set));
    });
  }

  function setScope(scope: string, usd: number | null): Promise<ScopeBudget> {
    if (!new RegExp(SCOPE_PATTERN).test(scope))
      throw new AgError("VALIDATION_ERROR", `budget ${scope}: server:day|month or tenant:<id>:day|month`);
    return serial(async () => {
      repo.setOverride(scope, usd, now());
      await evaluateScope(scopes.tenantOf(scope));
      return scopes.budget(scope);
    });
  }

  /** The budget that paused the session (its own, else its tenant's or the server's), by `add` dollars. */
  function raiseBy(sessionId: string, add: number): Promise<unknown> {
    const row = rowOf(sessionId);
    const by = row.reachedBy;
    if (by && by !== "session") return setScope(by, round((scopes.cap(by) ?? 0) + add));
    return raise(sessionId, { usd: round((row.usd ?? row.spentUsd) + add) });
  }

  /** A turn's spend is counted at each assistant message (text or tool call) only where a cap would interrupt it. */
  function interruptsMidTurn(sessionId: string): boolean {
    const row = repo.get(sessionId);
    if (row) return interrupts(row) && capped(row);
    return settings.interruptAtCap;
  }

  const unsubscribe = deps.bus.subscribe((event) => {
    if (!event.session) return;
    const counts =
      event.event === "session.turn_ended" ||
      event.event === "session.idle" ||
      ((event.event === "message.assistant" || event.event === "message.tool_use") &&
        interruptsMidTurn(event.session.id));
    if (!counts) return;
    void measureNow(event.session.id).catch((error) =>
      deps.logger.warn(`budget: counting session ${event.session?.id} failed`, error),
    );
  });

  return {
    view(sessionId) {
      const row = repo.get(sessionId);
      return row ? toView(row) : null;
    },
    attach(session, input) {
      const row = rowOf(session.id);
      const interrupt = input.interruptAtCap ?? null;
      const tokens = input.tokens ?? null;
      repo.save({ ...row, tenantId: session.tenantId, usd: input.usd, tokens, interrupt }, now());
      // The first prompt went in with the create: its turn may have ended already.
      void measureNow(session.id).catch((error) =>
        deps.logger.warn(`budget: counting session ${session.id} failed`, error),
      );
    },
    async admit(sessionId, text) {
      let row = rowOf(sessionId);
      if (!capped(row) && row.state !== "reached") return;
      await measureNow(sessionId);
      row = rowOf(sessionId);
      if (row.state !== "reached") return;
      repo.save({ ...row, heldPrompt: text }, now());
      const by = capsOf(row).find((c) => c.budget === row.reachedBy) ?? capsOf(row)[0]!;
      throw new AgError(
        "BUDGET_REACHED",
        `session ${sessionId} is paused: its ${describeCap(by)} is reached. The prompt is held and delivered once the budget is raised (POST /v1/sessions/${sessionId}/budget {"usd": …}, or ag budget ${sessionId} --usd …)`,
      );
    },
    raise,
    setScope,
    raiseBy,
    stop(sessionId) {
      deps.sessions.get(sessionId);
      const row = rowOf(sessionId);
      const stopped = { ...row, heldPrompt: null };
      repo.save(stopped, now());
      return toView(stopped);
    },
    measure: measureNow,
    overview() {
      const rows = repo.list();
      return {
        warnAt,
        interruptAtCap: settings.interruptAtCap,
        scopes: scopes.listed(rows.flatMap((row) => (row.tenantId ? [row.tenantId] : []))),
        sessions: rows.flatMap((row) => {
          const session = safeGet(row.sessionId);
          return session
            ? [{ id: session.id, name: session.name, tenantId: row.tenantId, ...toView(row) }]
            : [];
        }),
      };
    },
    turns(sessionId) {
      deps.sessions.get(sessionId);
      return repo.turns(sessionId);
    },
    close: unsubscribe,
  };
}

export type { BudgetState };
