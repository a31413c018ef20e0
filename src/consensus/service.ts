import type { Database } from "bun:sqlite";
import { randomUUID } from "node:crypto";
import { NO_TOKENS } from "../agents/vocabulary.ts";
import type { EventBus } from "../events/bus.ts";
import { normalizeText, type Owner, type SessionService, sumTokens, turnEnd } from "../sessions/index.ts";
import type { Clock } from "../shared/clock.ts";
import { AgError, describeError } from "../shared/errors.ts";
import type { Logger } from "../shared/log.ts";
import type { TenantUsers } from "../shared/run-as.ts";
import { createRuns } from "../shared/runs.ts";
import { inSpan } from "../telemetry/index.ts";
import { readAnswer } from "./answer.ts";
import { restateBrief, reviewBrief } from "./brief.ts";
import { collectChange } from "./change.ts";
import {
  type Consensus,
  DEFAULT_REVIEWERS,
  newReviewer,
  REVIEWER_ENDS,
  type Reviewer,
  reviewerManager,
  type StartConsensusInput,
} from "./consensus.ts";
import { describeOutcome } from "./describe.ts";
import { createConsensusRepo } from "./repo.ts";
import { tally, votes } from "./verdict.ts";

export interface ConsensusService {
  /** Starts a review of the session's work; answers at once with the record (status running). */
  start(sessionId: string, input: StartConsensusInput, requestedBy: string): Promise<Consensus>;
  /** A confined key (owner) sees only the reviews of sessions it sees: another's is not found. */
  get(id: string, owner?: Owner): Consensus;
  list(sessionId?: string, owner?: Owner): Consensus[];
  /** Picks up the reviews a previous run of ag left running. */
  resume(): void;
  /** Resolves when the review has finished (tests). */
  settled(id: string): Promise<Consensus>;
  close(): void;
}

type Sessions = Pick<
  SessionService,
  "get" | "sees" | "create" | "send" | "read" | "kill" | "summary" | "metrics" | "setProfile" | "answer"
>;

/** A reviewer's answer is kept up to this much. */
const MAX_ANSWER_CHARS = 8_000;

/**
 * Consensus review (CONTRACT §7): independent reviewers, each a fresh read-only session (`plan`
 * mode, the `readonly` permission profile) in the reviewed session's folder, all given the same
 * brief at once and none the others' answers. Each answer is read from the reviewer's
 * transcript; one that cannot be read is asked once to be restated, then recorded as unreadable,
 * never guessed. The majority of the read answers is the verdict. The record is saved at every
 * step, so a restart of ag picks a running review up where it was.
 */
export function createConsensusService(deps: {
  db: Database;
  sessions: Sessions;
  bus: Pick<EventBus, "subscribe" | "publish">;
  clock: Clock;
  logger: Logger;
  /** How long one reviewer may take, restatement included. */
  timeoutMs: number;
  /** The OS user a tenant's commands run as (runAs): the reviewed change is read as it. */
  owners?: TenantUsers;
  /** How the reviewed session's work is read; collectChange (git, else the files) unless given. */
  change?: typeof collectChange;
}): ConsensusService {
  const repo = createConsensusRepo(deps.db);
  const runs = createRuns<Consensus>("consensus", deps.logger);
  /** Reviewer sessions at work: a dialog they open is refused (a reviewer never waits for a person). */
  const reviewing = new Set<string>();
  /**
   * The plan a reviewer last proposed: in plan mode an agent may hand in its review as a plan to
   * approve (refused like any dialog); its text is then the answer.
   */
  const plans = new Map<string, string>();
  const at = () => new Date(deps.clock.now()).toISOString();

  const unsubscribe = deps.bus.subscribe((event) => {
    if (event.event !== "permission.requested" || !event.session || !reviewing.has(event.session.id)) return;
    const id = event.session.id;
    const pending = event.meta.pendingPermission;
    if (pending?.kind === "plan") plans.set(id, pending.plan ?? pending.detail);
    deps.logger.info(`reviewer ${event.session.name}: refused ${event.detail} (reviewers change nothing)`);
    void deps.sessions.answer(id, false, pending?.id).catch((error) => {
      deps.logger.warn(`reviewer ${event.session?.name}: its dialog could not be refused`, error);
    });
  });

  /** Whether the owner sees the reviewed session decides (a session pruned since is nobody's). */
  function visible(record: Consensus, owner?: Owner): boolean {
    return deps.sessions.sees(owner, record.sessionId);
  }

  function saved(record: Consensus): Consensus {
    record.updatedAt = at();
    repo.save(record);
    return record;
  }

  async function startReviewer(record: Consensus, r: Reviewer, brief: string): Promise<void> {
    // A start cut short (by a restart) begins again in a fresh session: its brief may be half typed.
    if (r.sessionId) await deps.sessions.kill(r.sessionId).catch(() => {});
    Object.assign(r, { status: "starting", sessionId: null, startedAt: at() });
    saved(record);
    const target = deps.sessions.get(record.sessionId);
    const created = await deps.sessions.create(
      {
        workDir: target.workDir,
        name: `review-${target.name}-${record.id.slice(0, 4)}-${r.index}`.slice(0, 128),
        agent: r.agent,
        ...(r.driver ? { driver: r.driver } : {}),
        permissionMode: "plan",
        reuse: false,
      },
      // The reviewed session's tenant's: the reviewer's launch is checked against its folders.
      { tenantId: target.tenantId },
      { managedBy: reviewerManager(record.id) },
    );
    r.sessionId = created.session.id;
    reviewing.add(r.sessionId);
    saved(record);
    // Read-only twice over: plan mode, and ag's pre-tool hook refusing writes and commands.
    deps.sessions.setProfile(r.sessionId, "readonly");
    const sent = await deps.sessions.send(r.sessionId, brief);
    if (!sent.delivered) throw new Error(`its brief was not delivered: ${sent.reason ?? "unknown"}`);
    r.status = "reviewing";
    saved(record);
  }

  /** Waits for the reviewer's answer and reads it; asks once for a restatement. */
  async function hearReviewer(record: Consensus, r: Reviewer, deadline: number): Promise<void> {
    const sessionId = r.sessionId!;
    reviewing.add(sessionId);
    for (;;) {
      const how = await turnEnd(deps, sessionId, Math.max(0, deadline - deps.clock.now()));
      if (how === "timeout") {
        r.status = "timed_out";
        r.error = `no answer within ${deps.timeoutMs} ms`;
        return;
      }
      const text = (await deps.sessions.read(sessionId)).output;
      const plan = plans.get(sessionId);
      const output =
        plan && !readAnswer(text, record.criteria).ok && readAnswer(plan, record.criteria).ok ? plan : text;
      r.answer = output.length > MAX_ANSWER_CHARS ? `${output.slice(0, MAX_ANSWER_CHARS)}…` : output;
      const reading = readAnswer(output, record.criteria);
      if (reading.ok) {
        Object.assign(r, {
          status: "done",
          verdict: reading.answer.verdict,
          criteria: reading.answer.criteria,
        });
        delete r.error;
        return;
      }
      if (how === "ended") {
        r.status = output ? "unparsable" : "failed";
        r.error = output ? reading.reason : "its session ended before it answered";
        return;
      }
      if (r.status === "restating") {
        r.status = "unparsable";
        r.error = reading.reason;
        return;
      }
      Object.assign(r, { status: "restating", restated: true, error: reading.reason });
      saved(record);
      // What was read is replaced by the restated answer: the log keeps it, to tell an answer in
      // the wrong form from one read before the agent had given it.
      deps.logger.info(
        `reviewer ${r.index} of review ${record.id}: ${reading.reason}; asked to restate. It read ` +
          `${JSON.stringify(output.slice(0, 300))} (session ${deps.sessions.get(sessionId).status})`,
      );
      const sent = await deps.sessions.send(sessionId, restateBrief(reading.reason, record.criteria.length));
      if (!sent.delivered) {
        r.status = "unparsable";
        r.error = `${reading.reason}; the request to restate was not delivered`;
        return;
      }
    }
  }

  function runReviewer(record: Consensus, r: Reviewer, brief: string): Promise<void> {
    const attributes = { "ag.consensus.id": record.id, "ag.consensus.reviewer": r.index };
    return inSpan("consensus.reviewer", attributes, async (span) => {
      await runReviewerNow(record, r, brief);
      span.setAttributes({
        "ag.consensus.reviewer.status": r.status,
        "ag.consensus.reviewer.verdict": r.verdict ?? "",
      });
    });
  }

  async function runReviewerNow(record: Consensus, r: Reviewer, brief: string): Promise<void> {
    try {
      if (r.status === "pending" || r.status === "starting") await startReviewer(record, r, brief);
      const started = r.startedAt ? Date.parse(r.startedAt) : deps.clock.now();
      await hearReviewer(record, r, started + deps.timeoutMs);
    } catch (error) {
      r.status = "failed";
      r.error = describeError(error);
    } finally {
      if (r.sessionId) {
        const metrics = await deps.sessions.metrics(r.sessionId).catch(() => null);
        if (metrics) {
          r.tokens = { ...metrics.tokens };
          r.costUsd = metrics.estimatedCost.usd;
        }
        reviewing.delete(r.sessionId);
        plans.delete(r.sessionId);
        await deps.sessions.kill(r.sessionId).catch(() => {});
      }
      r.finishedAt = at();
      saved(record);
    }
  }

  function finish(record: Consensus): Consensus {
    const result = tally(record.criteria, record.reviewers);
    Object.assign(record, result, {
      status: result.counted > 0 ? "completed" : "failed",
      tokens: sumTokens(record.reviewers.map((r) => r.tokens)),
      costUsd: record.reviewers.reduce((sum, r) => sum + r.costUsd, 0),
      finishedAt: at(),
    });
    if (result.counted === 0) record.error = "no reviewer's answer could be read";
    saved(record);
    announce(record);
    return record;
  }

  function announce(record: Consensus): void {
    let session: { id: string; name: string; workDir: string } | undefined;
    try {
      const target = deps.sessions.get(record.sessionId);
      session = { id: target.id, name: target.name, workDir: target.workDir };
    } catch {
      session = undefined; // the reviewed session was pruned meanwhile
    }
    const { approve, reject } = votes(record.reviewers);
    deps.bus.publish({
      event: "consensus.completed",
      ...(session ? { session } : {}),
      detail: describeOutcome(record),
      meta: {
        consensusId: record.id,
        sessionId: record.sessionId,
        status: record.status as "completed" | "failed",
        verdict: record.verdict,
        agreement: record.agreement,
        reviewers: record.reviewers.length,
        counted: record.counted,
        approve,
        reject,
        criteria: record.criteriaVerdicts.map((c) => ({ criterion: c.criterion, verdict: c.verdict })),
        costUsd: record.costUsd,
        record: `/v1/consensus/${record.id}`,
      },
    });
  }

  async function run(record: Consensus): Promise<Consensus> {
    const brief = repo.brief(record.id);
    if (brief === null) {
      record.error = "its brief is missing";
      return finish(record);
    }
    await Promise.all(
      record.reviewers
        .filter((r) => !REVIEWER_ENDS.includes(r.status))
        .map((r) => runReviewer(record, r, brief)),
    );
    return finish(record);
  }

  function launch(record: Consensus): void {
    runs.launch(record.id, run(record), record);
  }

  const service: ConsensusService = {
    async start(sessionId, input, requestedBy) {
      const target = deps.sessions.get(sessionId);
      const [summary, read] = await Promise.all([
        deps.sessions.summary(sessionId),
        deps.sessions.read(sessionId),
      ]);
      const change = await (deps.change ?? collectChange)(
        { workDir: target.workDir, baseCommit: target.baseCommit, filesTouched: summary.filesTouched },
        deps.owners?.(target.tenantId) ?? null,
      );
      const count = input.reviewers ?? DEFAULT_REVIEWERS;
      const brief = normalizeText(
        reviewBrief({
          reviewers: count,
          sessionName: target.name,
          criteria: input.criteria,
          change,
          lastAnswer: read.output,
        }),
        "the review's brief",
      );
      const now = at();
      const record: Consensus = {
        id: randomUUID(),
        sessionId,
        criteria: [...input.criteria],
        status: "running",
        reviewers: Array.from({ length: count }, (_, i) =>
          newReviewer(i + 1, input.agent ?? target.agent, input.driver),
        ),
        verdict: null,
        agreement: null,
        counted: 0,
        criteriaVerdicts: [],
        change: change.change,
        tokens: { ...NO_TOKENS },
        costUsd: 0,
        requestedBy,
        createdAt: now,
        updatedAt: now,
        finishedAt: null,
      };
      repo.insert(record, brief);
      deps.logger.info(
        `consensus ${record.id}: ${count} reviewers of session ${target.name}, asked by ${requestedBy}`,
      );
      launch(structuredClone(record));
      return record;
    },
    get(id, owner) {
      const found = repo.get(id);
      if (found && !visible(found, owner))
        throw new AgError("CONSENSUS_NOT_FOUND", `no consensus review ${id}`);
      if (!found) throw new AgError("CONSENSUS_NOT_FOUND", `no consensus review ${id}`);
      return found;
    },
    list: (sessionId, owner) => repo.list(sessionId).filter((record) => visible(record, owner)),
    resume() {
      for (const record of repo.running()) if (!runs.has(record.id)) launch(record);
    },
    settled: (id) => runs.get(id) ?? Promise.resolve(service.get(id)),
    close() {
      unsubscribe();
      // Runs stop with the process; their saved state is resumed at the next start.
      runs.clear();
    },
  };
  return service;
}
