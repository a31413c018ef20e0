import type { CommandOutcome } from "./runner.ts";
import type { StepName, VerificationStep } from "./verification.ts";

/**
 * The verification plan, pure: which commands run in what order, which are skipped and why, and
 * how a command's outcome reads as a step and the whole as SPEC's summary line.
 */

/** What the plan needs to know about a workDir (project.ts reads it). */
export interface Project {
  hasTsconfig: boolean;
  /** package.json `scripts`, string values only. */
  scripts: Record<string, string>;
}

export interface StepTimeouts {
  /** Type check and build (SPEC: 120 s). */
  stepMs: number;
  /** Test (SPEC: 180 s). */
  testMs: number;
}

export const DEFAULT_TIMEOUTS: StepTimeouts = { stepMs: 120_000, testMs: 180_000 };

export interface PlannedStep {
  name: StepName;
  argv: string[];
  command: string;
  timeoutMs: number;
  /** Why the step does not run; null when it runs. */
  skip: string | null;
}

/**
 * `--no-install`: without a local TypeScript, a bare `npx tsc` would download and run the npm
 * package that happens to be named "tsc" (not the compiler), or wait on an install prompt.
 */
const COMMANDS: Record<StepName, string[]> = {
  tsc: ["npx", "--no-install", "tsc", "--noEmit"],
  build: ["npm", "run", "build"],
  test: ["npm", "test"],
};

/** What `npm init` writes as the test script: a placeholder that always fails, not a test. */
const NPM_PLACEHOLDER_TEST = /no test specified/i;

export function planSteps(
  project: Project,
  options: { criticalOnly: boolean; timeouts: StepTimeouts },
): PlannedStep[] {
  const plan = (name: StepName, skip: string | null): PlannedStep => ({
    name,
    argv: COMMANDS[name],
    command: COMMANDS[name].join(" "),
    timeoutMs: name === "test" ? options.timeouts.testMs : options.timeouts.stepMs,
    skip,
  });
  const test = project.scripts.test;
  return [
    plan("tsc", project.hasTsconfig ? null : "no tsconfig.json in the workDir"),
    plan("build", project.scripts.build ? null : "package.json has no build script"),
    plan(
      "test",
      options.criticalOnly
        ? "criticalOnly: the test step is skipped"
        : !test
          ? "package.json has no test script"
          : NPM_PLACEHOLDER_TEST.test(test)
            ? "the test script is npm's placeholder (no test specified)"
            : null,
    ),
  ];
}

export function skippedStep(plan: PlannedStep): VerificationStep {
  return {
    name: plan.name,
    command: plan.command,
    ok: true,
    skipped: true,
    reason: plan.skip ?? "skipped",
    exitCode: null,
    durationMs: 0,
    output: "",
  };
}

/** What npx prints when --no-install stops it: the project has no TypeScript of its own. */
const NPX_MISSING = /npx canceled due to missing packages/;

export function stepFromOutcome(plan: PlannedStep, outcome: CommandOutcome): VerificationStep {
  const ok = outcome.exitCode === 0 && !outcome.timedOut && !outcome.aborted;
  const reason = outcome.timedOut
    ? `timed out after ${plan.timeoutMs} ms: its whole process tree was killed`
    : outcome.aborted
      ? "stopped: ag is shutting down"
      : outcome.spawnError !== undefined
        ? `could not start ${plan.argv[0]}: ${outcome.spawnError}`
        : plan.name === "tsc" && NPX_MISSING.test(outcome.output)
          ? "TypeScript is not installed in the project (no local tsc; ag never installs packages)"
          : undefined;
  return {
    name: plan.name,
    command: plan.command,
    ok,
    skipped: false,
    ...(reason ? { reason } : {}),
    exitCode: outcome.exitCode,
    durationMs: outcome.durationMs,
    output: outcome.output,
  };
}

const MARKS = { passed: "✅", failed: "❌", skipped: "⏭️" } as const;

/** SPEC: `Verification passed: tsc ✅, build ✅, test ✅ (<ms>ms)`; skipped steps show ⏭️. */
export function summarize(steps: readonly VerificationStep[], totalDurationMs: number): string {
  const ok = steps.every((s) => s.ok);
  const marks = steps.map(
    (s) => `${s.name} ${s.skipped ? MARKS.skipped : s.ok ? MARKS.passed : MARKS.failed}`,
  );
  return `Verification ${ok ? "passed" : "failed"}: ${marks.join(", ")} (${totalDurationMs}ms)`;
}

/** The summary of a workDir that cannot be verified at all (no package.json, say). */
export function unverifiableSummary(reason: string, totalDurationMs: number): string {
  return `Verification failed: ${reason} (${totalDurationMs}ms)`;
}
