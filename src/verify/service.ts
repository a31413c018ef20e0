import type { EventBus } from "../events/bus.ts";
import type { SessionService } from "../sessions/index.ts";
import { describeError } from "../shared/errors.ts";
import type { Logger } from "../shared/log.ts";
import type { TenantUsers } from "../shared/run-as.ts";
import { inSpan } from "../telemetry/index.ts";
import { readProject } from "./project.ts";
import { type RunCommand, runCommand } from "./runner.ts";
import {
  DEFAULT_TIMEOUTS,
  planSteps,
  type StepTimeouts,
  skippedStep,
  stepFromOutcome,
  summarize,
  unverifiableSummary,
} from "./steps.ts";
import type { VerificationResult, VerificationStep } from "./verification.ts";

export interface VerificationSettings {
  /** verificationProtocol.criticalOnly: skip the test step unless a call says otherwise. */
  criticalOnly: boolean;
  /** verificationProtocol.autoVerifyOnStop: verify whenever an agent's turn ends. */
  autoVerifyOnStop: boolean;
  /** SPEC's 120 s / 180 s unless given (tests use short ones). */
  timeouts?: Partial<StepTimeouts> & { killGraceMs?: number };
}

export interface VerificationServiceDeps {
  sessions: Pick<SessionService, "get">;
  bus: EventBus;
  logger: Logger;
  settings: VerificationSettings;
  /** Runs one command; the real process-group runner unless a test gives another. */
  run?: RunCommand;
  /** The OS user a tenant's commands run as (runAs); none: as ag. */
  owners?: TenantUsers;
}

export interface VerifyOptions {
  /** Overrides verificationProtocol.criticalOnly for this call. */
  criticalOnly?: boolean;
  /** What asked for it, in the event's meta: "api" or "auto" (turn end). */
  trigger?: "api" | "auto";
}

export interface VerificationService {
  /**
   * Type check, build and test in the session's workDir (SESSION_NOT_FOUND for an unknown id),
   * then publish the `verification` event. Failed steps are a result (`ok: false`), not an error.
   */
  verify(sessionId: string, options?: VerifyOptions): Promise<VerificationResult>;
  /** Stops auto-verification and kills the process trees of running steps. */
  dispose(): void;
}

const KILL_GRACE_MS = 2_000;
/** Steps run without a terminal: CI=true keeps test runners from watching or prompting. */
const CHILD_ENV_DEFAULTS = { CI: "true" };

/**
 * Runs verifications one at a time per workDir (two builds writing the same output folder at
 * once would spoil both). A call made while one runs is queued behind it, so its result always
 * reflects the files as they were when it was asked for; calls for the same session and
 * criticalOnly that arrive while one is queued share that queued run.
 */
export function createVerificationService(deps: VerificationServiceDeps): VerificationService {
  const run = deps.run ?? runCommand;
  const timeouts: StepTimeouts = { ...DEFAULT_TIMEOUTS, ...deps.settings.timeouts };
  const killGraceMs = deps.settings.timeouts?.killGraceMs ?? KILL_GRACE_MS;
  const shutdown = new AbortController();
  /** The tail of each workDir's queue. */
  const lanes = new Map<string, Promise<unknown>>();
  /** Runs asked for but not started yet, by session and criticalOnly. */
  const queued = new Map<string, Promise<VerificationResult>>();

  async function execute(
    session: { id: string; name: string; workDir: string; tenantId: string | null },
    criticalOnly: boolean,
    trigger: "api" | "auto",
  ): Promise<VerificationResult> {
    const started = performance.now();
    const elapsed = () => Math.round(performance.now() - started);
    const reading = readProject(session.workDir);
    let result: VerificationResult;
    if (!reading.ok) {
      const totalDurationMs = elapsed();
      result = {
        ok: false,
        steps: [],
        totalDurationMs,
        summary: unverifiableSummary(reading.reason, totalDurationMs),
      };
    } else {
      const steps: VerificationStep[] = [];
      // Every step runs even after one fails: the agent (or its user) sees all that is broken at once.
      for (const plan of planSteps(reading.project, { criticalOnly, timeouts })) {
        if (plan.skip !== null) {
          steps.push(skippedStep(plan));
          continue;
        }
        const step = await inSpan(
          "verification.step",
          { "ag.verification.step": plan.name },
          async (span) => {
            const outcome = await run({
              argv: plan.argv,
              cwd: session.workDir,
              timeoutMs: plan.timeoutMs,
              killGraceMs,
              defaultEnv: CHILD_ENV_DEFAULTS,
              signal: shutdown.signal,
              runAs: deps.owners?.(session.tenantId) ?? null,
            });
            const done = stepFromOutcome(plan, outcome);
            span.setAttributes({
              "ag.verification.ok": done.ok,
              "ag.verification.exit_code": done.exitCode ?? -1,
            });
            return done;
          },
        );
        steps.push(step);
      }
      const totalDurationMs = elapsed();
      result = {
        ok: steps.every((s) => s.ok),
        steps,
        totalDurationMs,
        summary: summarize(steps, totalDurationMs),
      };
    }
    deps.logger.info(`session ${session.id}: ${result.summary}`);
    deps.bus.publish({
      event: "verification",
      session: { id: session.id, name: session.name, workDir: session.workDir },
      detail: result.summary,
      meta: { ...result, criticalOnly, trigger },
    });
    return result;
  }

  function verify(sessionId: string, options: VerifyOptions = {}): Promise<VerificationResult> {
    const session = deps.sessions.get(sessionId);
    const criticalOnly = options.criticalOnly ?? deps.settings.criticalOnly;
    const key = `${session.id}\n${criticalOnly}`;
    const waiting = queued.get(key);
    if (waiting) return waiting;
    const before = lanes.get(session.workDir) ?? Promise.resolve();
    const result = before.then(() => {
      queued.delete(key);
      return execute(session, criticalOnly, options.trigger ?? "api");
    });
    queued.set(key, result);
    const tail = result.catch(() => {});
    lanes.set(session.workDir, tail);
    void tail.then(() => {
      if (lanes.get(session.workDir) === tail) lanes.delete(session.workDir);
    });
    return result;
  }

  let stopAuto: (() => void) | null = null;
  if (deps.settings.autoVerifyOnStop) {
    // The session's state says when a turn ends (its boot and its end are no turns).
    stopAuto = deps.bus.subscribe((event) => {
      const sessionId = event.event === "session.turn_ended" ? event.session?.id : undefined;
      if (sessionId === undefined) return;
      try {
        verify(sessionId, { trigger: "auto" }).catch((error) =>
          deps.logger.error(`auto-verification of session ${sessionId} failed: ${describeError(error)}`),
        );
      } catch (error) {
        // The session was removed between its event and now: nothing to verify.
        deps.logger.debug(`no auto-verification of session ${sessionId}: ${describeError(error)}`);
      }
    });
  }

  return {
    verify,
    dispose() {
      stopAuto?.();
      stopAuto = null;
      shutdown.abort();
    },
  };
}
