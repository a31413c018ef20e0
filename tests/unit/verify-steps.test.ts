import { describe, expect, test } from "bun:test";
import { createOutputTail, OUTPUT_LIMIT } from "../../src/verify/runner.ts";
import {
  DEFAULT_TIMEOUTS,
  type PlannedStep,
  type Project,
  planSteps,
  skippedStep,
  stepFromOutcome,
  summarize,
  unverifiableSummary,
} from "../../src/verify/steps.ts";

const full: Project = { hasTsconfig: true, scripts: { build: "node build.js", test: "node test.js" } };
const plan = (project: Project, criticalOnly = false) =>
  planSteps(project, { criticalOnly, timeouts: DEFAULT_TIMEOUTS });
const outcome = (over: Partial<Parameters<typeof stepFromOutcome>[1]> = {}) => ({
  exitCode: 0,
  output: "",
  timedOut: false,
  aborted: false,
  durationMs: 12,
  ...over,
});

describe("the step plan", () => {
  test("type check, build, test in that order, with SPEC's commands and timeouts", () => {
    const steps = plan(full);
    expect(steps.map((s) => [s.name, s.command, s.timeoutMs, s.skip])).toEqual([
      ["tsc", "npx --no-install tsc --noEmit", 120_000, null],
      ["build", "npm run build", 120_000, null],
      ["test", "npm test", 180_000, null],
    ]);
  });

  test("a missing tsconfig or script skips its step, never fails it", () => {
    const steps = plan({ hasTsconfig: false, scripts: {} });
    expect(steps.map((s) => s.skip)).toEqual([
      "no tsconfig.json in the workDir",
      "package.json has no build script",
      "package.json has no test script",
    ]);
  });

  test("npm's placeholder test script is not a test", () => {
    const [, , testStep] = plan({
      hasTsconfig: true,
      scripts: { test: 'echo "Error: no test specified" && exit 1' },
    });
    expect(testStep!.skip).toBe("the test script is npm's placeholder (no test specified)");
  });

  test("criticalOnly skips the test step only", () => {
    expect(plan(full, true).map((s) => s.skip)).toEqual([
      null,
      null,
      "criticalOnly: the test step is skipped",
    ]);
  });

  test("timeouts come from the settings", () => {
    const steps = planSteps(full, { criticalOnly: false, timeouts: { stepMs: 500, testMs: 700 } });
    expect(steps.map((s) => s.timeoutMs)).toEqual([500, 500, 700]);
  });
});

describe("steps from outcomes", () => {
  const [tsc, build] = plan(full) as [PlannedStep, PlannedStep, PlannedStep];

  test("exit 0 passes; anything else fails with its exit code and output", () => {
    expect(stepFromOutcome(build, outcome({ output: "built\n" }))).toEqual({
      name: "build",
      command: "npm run build",
      ok: true,
      skipped: false,
      exitCode: 0,
      durationMs: 12,
      output: "built\n",
    });
    const failed = stepFromOutcome(build, outcome({ exitCode: 2, output: "boom" }));
    expect(failed).toMatchObject({ ok: false, exitCode: 2, output: "boom" });
    expect(failed.reason).toBeUndefined();
  });

  test("a timeout says so and never passes", () => {
    const step = stepFromOutcome(build, outcome({ exitCode: null, timedOut: true }));
    expect(step.ok).toBe(false);
    expect(step.reason).toBe("timed out after 120000 ms: its whole process tree was killed");
  });

  test("a program that cannot start fails with the reason", () => {
    const step = stepFromOutcome(build, outcome({ exitCode: null, spawnError: "not found" }));
    expect(step).toMatchObject({ ok: false, reason: "could not start npm: not found" });
  });

  test("a project without TypeScript installed fails tsc with a clear reason", () => {
    const step = stepFromOutcome(
      tsc,
      outcome({
        exitCode: 1,
        output: 'npm error npx canceled due to missing packages and no YES option: ["tsc"]',
      }),
    );
    expect(step.ok).toBe(false);
    expect(step.reason).toContain("TypeScript is not installed");
  });

  test("a skipped step is ok, with its reason and no exit code", () => {
    const [, , testStep] = plan(full, true);
    expect(skippedStep(testStep!)).toEqual({
      name: "test",
      command: "npm test",
      ok: true,
      skipped: true,
      reason: "criticalOnly: the test step is skipped",
      exitCode: null,
      durationMs: 0,
      output: "",
    });
  });
});

describe("the summary line", () => {
  const [tsc, build, testPlan] = plan(full, true) as [PlannedStep, PlannedStep, PlannedStep];

  test("reads as SPEC's", () => {
    const steps = [tsc, build].map((p) => stepFromOutcome(p, outcome()));
    steps.push(stepFromOutcome(testPlan, outcome()));
    expect(summarize(steps, 812)).toBe("Verification passed: tsc ✅, build ✅, test ✅ (812ms)");
  });

  test("marks failed and skipped steps", () => {
    const steps = [
      stepFromOutcome(tsc, outcome({ exitCode: 1 })),
      stepFromOutcome(build, outcome()),
      skippedStep(testPlan),
    ];
    expect(summarize(steps, 40)).toBe("Verification failed: tsc ❌, build ✅, test ⏭️ (40ms)");
  });

  test("a workDir that cannot be verified says why", () => {
    expect(unverifiableSummary("no package.json in /p", 3)).toBe(
      "Verification failed: no package.json in /p (3ms)",
    );
  });
});

describe("the output tail", () => {
  test("keeps the last characters only", () => {
    const tail = createOutputTail(OUTPUT_LIMIT);
    for (let i = 0; i < 1000; i++) tail.append(`line ${i}\n`);
    const text = tail.text();
    expect(text.length).toBe(OUTPUT_LIMIT);
    expect(text.endsWith("line 999\n")).toBe(true);
  });

  test("short output is kept whole", () => {
    const tail = createOutputTail(10);
    tail.append("ab");
    tail.append("cd");
    expect(tail.text()).toBe("abcd");
  });

  test("never starts with half a surrogate pair", () => {
    const tail = createOutputTail(3);
    tail.append("x😀ab");
    expect(tail.text()).toBe("ab");
  });
});
