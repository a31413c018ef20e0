import { describe, expect, test } from "bun:test";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { e2eFiles, e2eRuns, e2eSchedule, loadsTheMachine, REPO, TIMINGS } from "../../scripts/e2e-plan.ts";

describe("which e2e files run alone", () => {
  test("a file that starts busy loops itself, or through the tmux or ACP scenario, loads the machine", () => {
    expect(loadsTheMachine("tests/e2e/state-under-load.test.ts")).toBe(true);
    expect(loadsTheMachine("tests/e2e/gemini.test.ts")).toBe(true); // helpers/tmux-scenario.ts
    expect(loadsTheMachine("tests/e2e/acp-claude.test.ts")).toBe(true); // helpers/acp-scenario.ts
  });

  test("a file that only drives agents does not", () => {
    expect(loadsTheMachine("tests/e2e/sessions.test.ts")).toBe(false);
    expect(loadsTheMachine("tests/e2e/dashboard.test.ts")).toBe(false);
    // OpenCode's idle run and its loaded twin share their scenario, not their load.
    expect(loadsTheMachine("tests/e2e/opencode.test.ts")).toBe(false);
    expect(loadsTheMachine("tests/e2e/opencode-load.test.ts")).toBe(true);
  });

  test("every e2e file runs exactly once: beside each other two at a time, the loading ones alone after", () => {
    const files = e2eFiles();
    const runs = e2eRuns(files);
    expect(runs).toHaveLength(2);
    const [beside, alone] = runs as [string[], string[]];
    expect(beside).toContain("--parallel=2");
    expect(beside).toContain(`--timings=${TIMINGS}`);
    expect(alone.some((arg) => arg.startsWith("--parallel"))).toBe(false);
    const named = [...beside, ...alone].filter((arg) => arg.endsWith(".test.ts"));
    expect(named.toSorted()).toEqual(files);
    expect(alone).toContain("tests/e2e/state-under-load.test.ts");
    expect(beside).toContain("tests/e2e/sessions.test.ts");
  });

  test("a set of files with none that loads makes one run", () => {
    const { beside, alone } = e2eSchedule(["tests/e2e/sessions.test.ts", "tests/e2e/cli.test.ts"]);
    expect(alone).toEqual([]);
    expect(e2eRuns(beside)).toHaveLength(1);
  });

  test("the timings name only test files that exist", () => {
    const timings = JSON.parse(readFileSync(join(REPO, TIMINGS), "utf8")) as {
      files: Record<string, number>;
    };
    expect(Object.keys(timings.files).filter((file) => !existsSync(join(REPO, file)))).toEqual([]);
  });
});
