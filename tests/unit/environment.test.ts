import { describe, expect, test } from "bun:test";
import { SETTINGS } from "../../src/config/schema.ts";
import { declaredEnvironment, gitEnvironment, isAgVariable } from "../../src/shared/environment.ts";
import { configOverrides } from "../../src/shared/git.ts";
import { staleNames } from "../../src/tmux/commands.ts";

describe("the environment ag's children start from", () => {
  test("every setting ag reads from the environment is ag's own, and never passed on", () => {
    for (const setting of SETTINGS) if (setting.env) expect(isAgVariable(setting.env)).toBe(true);
  });

  test("ag's settings and secrets are out; the user's own variables are in", () => {
    const env = declaredEnvironment({
      SVC_AUTH_TOKEN: "master",
      SVC_WEBHOOKS: "[]",
      AG_TEST_SENTINEL: "sentinel",
      MODEL_FAST: "haiku",
      AGENT_DATA_DIR: "/x",
      PATH: "/usr/bin",
      HOME: "/home/me",
      ANTHROPIC_API_KEY: "the user's",
      HTTPS_PROXY: "http://proxy",
      UNDEFINED: undefined,
    });
    expect(env).toEqual({
      PATH: "/usr/bin",
      HOME: "/home/me",
      ANTHROPIC_API_KEY: "the user's",
      HTTPS_PROXY: "http://proxy",
    });
  });

  test("what changes an agent's own checks is neutralised: IS_SANDBOX, CLAUDECODE, the user's TMUX", () => {
    const env = declaredEnvironment({
      IS_SANDBOX: "yes",
      CLAUDECODE: "1",
      TMUX: "/tmp/t,1,0",
      TMUX_PANE: "%1",
      A: "b",
    });
    expect(env).toEqual({ A: "b" });
  });

  test("names a shell or tmux would read as more than a name stay out (bash's exported functions)", () => {
    const env = declaredEnvironment({ "BASH_FUNC_f%%": "() { echo; }", "A-B": "1", OK_1: "1" });
    expect(env).toEqual({ OK_1: "1" });
  });

  test("ag's own git gets no inherited GIT_* (nothing points it elsewhere or adds config)", () => {
    const env = gitEnvironment(
      { GIT_PAGER: "cat" },
      { GIT_DIR: "/else", GIT_CONFIG_COUNT: "1", PATH: "/bin" },
    );
    expect(env).toEqual({ PATH: "/bin", GIT_PAGER: "cat" });
  });
});

describe("a reviewed repository's config runs nothing for ag", () => {
  test("every filter driver the config names gets no command and is not required", () => {
    const overrides = configOverrides([
      "core.bare",
      "filter.Ev.il=x.clean",
      "filter.lfs.process",
      "diff.x.textconv",
    ]);
    expect(overrides).toContainEqual(["core.fsmonitor", "false"]);
    expect(overrides).toContainEqual(["core.hooksPath", "/dev/null"]);
    for (const driver of ["Ev.il=x", "lfs"]) {
      for (const key of ["clean", "smudge", "process"])
        expect(overrides).toContainEqual([`filter.${driver}.${key}`, ""]);
      expect(overrides).toContainEqual([`filter.${driver}.required`, "false"]);
    }
  });
});

describe("the tmux server's environment", () => {
  test("names ag's environment lacks are the stale ones (set or marked removed)", () => {
    expect(staleNames(["PATH=/bin", "OLD=1", "-GONE", "SVC_AUTH_TOKEN=x=y"], { PATH: "/usr/bin" })).toEqual([
      "OLD",
      "GONE",
      "SVC_AUTH_TOKEN",
    ]);
  });
});
