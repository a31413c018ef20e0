import { describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { checkStarterFiles, problemOf } from "../../src/agents/claude/starter-files.ts";
import { STARTER_TEMPLATES } from "../../src/agents/claude/starter-templates.ts";
import { agentAdapters } from "../../src/agents/index.ts";
import { loadConfig } from "../../src/config/index.ts";
import type { LoadedConfig } from "../../src/config/load.ts";
import { migrateAuthToken } from "../../src/init/auth-migrate.ts";
import { removeTopLevelKey, starterConfigText } from "../../src/init/config-file.ts";
import { accessCheck, type DoctorDeps, doctorPassed, runDoctor } from "../../src/init/doctor.ts";
import { bootstrapProjectConfig, initProject } from "../../src/init/project.ts";
import { AgError } from "../../src/shared/errors.ts";
import { agentInstallCommand, installCommand } from "../../src/shared/install.ts";
import { programVersion } from "../../src/shared/program.ts";
import { tempDir } from "../helpers/temp.ts";

const configOf = (cwd: string) => join(cwd, ".svc", "config.yaml");

function agError(run: () => unknown): AgError {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(AgError);
    return error as AgError;
  }
  throw new Error("expected an AgError");
}

describe("ag init", () => {
  test("writes a starter config that ag reads without values or warnings", async () => {
    const cwd = tempDir();
    const result = await initProject({ cwd });
    expect(result).toEqual({ config: { path: configOf(cwd), action: "created" }, files: [] });
    expect(readFileSync(configOf(cwd), "utf8")).toBe(starterConfigText());
    const home = tempDir();
    const loaded = loadConfig({ env: {}, cwd, home, containerRoot: tempDir() });
    expect(loaded.warnings).toEqual([]);
    expect(Object.values(loaded.sources).every((s) => s.startsWith("default"))).toBe(true);
  });

  test("every line of the starter config, uncommented, is a valid setting", () => {
    const cwd = tempDir();
    const text = starterConfigText().replace(/^# (\w+: .*)$/gm, "$1");
    mkdirSync(join(cwd, ".svc"));
    writeFileSync(configOf(cwd), text);
    const loaded = loadConfig({ env: {}, cwd, home: tempDir(), containerRoot: tempDir() });
    expect(loaded.warnings).toEqual([]);
    expect(loaded.sources.permissionMode).toBe("./.svc/config.yaml");
    expect(loaded.sources.stallThresholdMs).toBe("./.svc/config.yaml");
  });

  test("an existing config is kept unless overwriting is confirmed or forced", async () => {
    const cwd = tempDir();
    mkdirSync(join(cwd, ".svc"));
    writeFileSync(configOf(cwd), "port: 9999\n");
    expect((await initProject({ cwd })).config.action).toBe("kept");
    const asked: string[] = [];
    const decline = (path: string) => {
      asked.push(path);
      return false;
    };
    const declined = await initProject({ cwd, confirmOverwrite: decline });
    expect(declined.config.action).toBe("kept");
    expect(asked).toEqual([configOf(cwd)]);
    expect(readFileSync(configOf(cwd), "utf8")).toBe("port: 9999\n");

    expect((await initProject({ cwd, confirmOverwrite: () => true })).config.action).toBe("overwritten");
    expect(readFileSync(configOf(cwd), "utf8")).toBe(starterConfigText());

    writeFileSync(configOf(cwd), "port: 9999\n");
    const forced = await initProject({
      cwd,
      force: true,
      confirmOverwrite: () => {
        throw new Error("--force does not ask");
      },
    });
    expect(forced.config.action).toBe("overwritten");
  });

  test("a template writes its files; existing ones are kept unless forced", async () => {
    const cwd = tempDir();
    const first = await initProject({ cwd, template: "docs-writer" });
    const skill = join(cwd, ".claude", "skills", "docs-writer", "SKILL.md");
    expect(first.files).toEqual([{ path: skill, action: "created" }]);
    writeFileSync(skill, "mine");
    expect((await initProject({ cwd, template: "docs-writer" })).files[0]!.action).toBe("kept");
    expect(readFileSync(skill, "utf8")).toBe("mine");
    expect((await initProject({ cwd, template: "docs-writer", force: true })).files[0]!.action).toBe(
      "overwritten",
    );
  });

  test("ag run's bootstrap writes the starter config only where there is none, and only if agreed", async () => {
    const cwd = tempDir();
    expect(await bootstrapProjectConfig({ cwd, confirm: () => false })).toBeNull();
    expect(existsSync(configOf(cwd))).toBe(false);
    expect(await bootstrapProjectConfig({ cwd })).toBe(configOf(cwd));
    expect(readFileSync(configOf(cwd), "utf8")).toBe(starterConfigText());

    writeFileSync(configOf(cwd), "port: 9999\n");
    const asked = await bootstrapProjectConfig({
      cwd,
      confirm: () => {
        throw new Error("an existing config is no question");
      },
    });
    expect(asked).toBeNull();
    expect(readFileSync(configOf(cwd), "utf8")).toBe("port: 9999\n");
  });

  test("an unknown template fails before anything is written", async () => {
    const cwd = tempDir();
    const error = await initProject({ cwd, template: "nope" }).catch((e) => e);
    expect(error).toBeInstanceOf(AgError);
    expect(error.code).toBe("USAGE_ERROR");
    expect(error.message).toContain("code-reviewer, ci-runner, pr-reviewer, docs-writer");
    expect(existsSync(join(cwd, ".svc"))).toBe(false);
  });
});

describe("starter templates", () => {
  test("are SPEC's four, in Claude Code's layout", () => {
    expect(STARTER_TEMPLATES.map((t) => [t.name, t.kind, t.files.map((f) => f.path)])).toEqual([
      ["code-reviewer", "agent", [".claude/agents/code-reviewer.md"]],
      ["ci-runner", "slash-command", [".claude/commands/ci-runner.md"]],
      ["pr-reviewer", "slash-command", [".claude/commands/pr-reviewer.md"]],
      ["docs-writer", "skill", [".claude/skills/docs-writer/SKILL.md"]],
    ]);
  });

  test("every template passes the doctor's check", async () => {
    const cwd = tempDir();
    for (const t of STARTER_TEMPLATES) await initProject({ cwd, template: t.name });
    const checks = checkStarterFiles(cwd);
    expect(checks).toHaveLength(4);
    expect(checks.filter((c) => !c.ok)).toEqual([]);
  });
});

describe("starter file checks", () => {
  const agent = (front: string) => problemOf("agent", ".claude/agents/a.md", `---\n${front}\n---\nbody\n`);
  const skill = (front: string, path = ".claude/skills/s/SKILL.md") =>
    problemOf("skill", path, `---\n${front}\n---\n`);

  test("a subagent needs name and description; tools is a string or a list", () => {
    expect(agent("name: a\ndescription: d")).toBeNull();
    expect(agent("name: a\ndescription: d\ntools: [Read, Grep]")).toBeNull();
    expect(agent("description: d")).toBe('front matter lacks "name"');
    expect(agent("name: a\ndescription: ''")).toBe('front matter lacks "description"');
    expect(agent("name: a\ndescription: d\ntools: 3")).toContain('"tools"');
    expect(problemOf("agent", "x.md", "no front matter")).toContain("no front matter");
  });

  test("front matter must be closed, valid YAML and a mapping", () => {
    expect(problemOf("agent", "x.md", "---\nname: a\n")).toContain("not closed");
    expect(agent("name: [a")).toContain("not valid YAML");
    expect(agent("- a")).toBe("front matter is not a YAML mapping");
  });

  test("a skill's name is lowercase-hyphenated and matches its folder", () => {
    expect(skill("name: s\ndescription: d")).toBeNull();
    expect(skill("name: Docs_Writer\ndescription: d")).toContain("lowercase");
    expect(skill("name: other\ndescription: d")).toBe('name "other" differs from its folder "s"');
  });

  test("a slash command may have no front matter; what it has must parse", () => {
    expect(problemOf("slash-command", "c.md", "Just a prompt\n")).toBeNull();
    expect(problemOf("slash-command", "c.md", "---\nargument-hint: [file]\n---\n")).toBeNull();
    expect(problemOf("slash-command", "c.md", "---\ndescription: [1, 2]\n---\n")).toContain("description");
  });

  test("files are found where Claude Code looks", () => {
    const cwd = tempDir();
    const put = (path: string, text: string) => {
      mkdirSync(join(cwd, path, ".."), { recursive: true });
      writeFileSync(join(cwd, path), text);
    };
    put(".claude/agents/bad.md", "---\nname: bad\n---\n");
    put(".claude/commands/git/commit.md", "Commit.\n");
    put(".claude/skills/tool/SKILL.md", "---\nname: tool\ndescription: d\n---\n");
    put(".claude/skills/tool/notes.md", "not checked\n");
    put(".claude/settings.json", "{}");
    expect(checkStarterFiles(cwd)).toEqual([
      {
        path: ".claude/agents/bad.md",
        kind: "agent",
        ok: false,
        problem: 'front matter lacks "description"',
      },
      { path: ".claude/commands/git/commit.md", kind: "slash-command", ok: true, problem: null },
      { path: ".claude/skills/tool/SKILL.md", kind: "skill", ok: true, problem: null },
    ]);
    expect(checkStarterFiles(tempDir())).toEqual([]);
  });
});

describe("removing a key from YAML text", () => {
  test("keeps every other byte", () => {
    const text = "# head\nport: 9100\nclientAuthToken: 'abc'  # old\n\n# tail\nhost: x\n";
    expect(removeTopLevelKey(text, "clientAuthToken")).toBe("# head\nport: 9100\n\n# tail\nhost: x\n");
    expect(removeTopLevelKey('"clientAuthToken": abc\n', "clientAuthToken")).toBe("");
  });

  test("refuses what it cannot remove by one line", () => {
    expect(removeTopLevelKey("port: 1\n", "clientAuthToken")).toBeNull();
    expect(removeTopLevelKey("clientAuthToken: |\n  abc\nport: 1\n", "clientAuthToken")).toBeNull();
    expect(removeTopLevelKey("nested:\n  clientAuthToken: abc\n", "clientAuthToken")).toBeNull();
  });
});

describe("ag auth migrate", () => {
  function project(yaml?: string) {
    const cwd = tempDir();
    const stateDir = join(tempDir(), "state");
    if (yaml !== undefined) {
      mkdirSync(join(cwd, ".svc"));
      writeFileSync(configOf(cwd), yaml);
    }
    const tokenFile = join(stateDir, "auth-token");
    const migrate = (force?: boolean) => migrateAuthToken({ cwd, stateDir, force });
    return { cwd, stateDir, tokenFile, migrate };
  }

  test("moves the token to a 0600 file in a 0700 directory and removes only the key", () => {
    const p = project("# my settings\nport: 9400\nclientAuthToken: tok-123\nlogLevel: debug # loud\n");
    expect(p.migrate().outcome).toBe("migrated");
    expect(readFileSync(p.tokenFile, "utf8")).toBe("tok-123\n");
    expect(statSync(p.tokenFile).mode & 0o777).toBe(0o600);
    expect(statSync(p.stateDir).mode & 0o777).toBe(0o700);
    expect(readFileSync(configOf(p.cwd), "utf8")).toBe("# my settings\nport: 9400\nlogLevel: debug # loud\n");
    expect(readdirNames(p.stateDir)).toEqual(["auth-token"]);
  });

  test("is idempotent", () => {
    const p = project("clientAuthToken: tok-123\n");
    p.migrate();
    const after = readFileSync(configOf(p.cwd), "utf8");
    expect(p.migrate().outcome).toBe("already-migrated");
    expect(readFileSync(configOf(p.cwd), "utf8")).toBe(after);
    expect(project().migrate().outcome).toBe("nothing-to-migrate");
    expect(project("port: 1\n").migrate().outcome).toBe("nothing-to-migrate");
  });

  test("the same token already in the file is no conflict", () => {
    const p = project("clientAuthToken: same\n");
    mkdirSync(p.stateDir, { recursive: true });
    writeFileSync(p.tokenFile, "same\n", { mode: 0o600 });
    expect(p.migrate().outcome).toBe("migrated");
    expect(readFileSync(configOf(p.cwd), "utf8")).toBe("");
  });

  test("a different token file is kept unless forced", () => {
    const p = project("clientAuthToken: new\n");
    mkdirSync(p.stateDir, { recursive: true });
    writeFileSync(p.tokenFile, "old\n", { mode: 0o600 });
    const error = agError(() => p.migrate());
    expect(error.code).toBe("CONFLICT");
    expect(error.message).not.toContain("new");
    expect(readFileSync(p.tokenFile, "utf8")).toBe("old\n");
    expect(readFileSync(configOf(p.cwd), "utf8")).toBe("clientAuthToken: new\n");
    expect(p.migrate(true).outcome).toBe("migrated");
    expect(readFileSync(p.tokenFile, "utf8")).toBe("new\n");
  });

  test("an empty token is removed, not written", () => {
    const p = project("clientAuthToken: ''\nport: 1\n");
    expect(p.migrate().outcome).toBe("removed-empty");
    expect(existsSync(p.tokenFile)).toBe(false);
    expect(readFileSync(configOf(p.cwd), "utf8")).toBe("port: 1\n");
  });

  test("a value it cannot remove safely changes nothing", () => {
    const text = "clientAuthToken: >\n  folded\nport: 1\n";
    const p = project(text);
    expect(agError(() => p.migrate()).code).toBe("CONFIG_INVALID");
    expect(readFileSync(configOf(p.cwd), "utf8")).toBe(text);
    expect(existsSync(p.tokenFile)).toBe(false);
  });
});

describe("ag doctor's access check", () => {
  const access = (env: Record<string, string>, containerRoot = tempDir()) => {
    const home = tempDir();
    return accessCheck(loadConfig({ env, cwd: home, home, containerRoot }));
  };

  test("beyond loopback with no token, ag's generated token is required; a configured token is named by its source", () => {
    const container = tempDir();
    writeFileSync(join(container, ".dockerenv"), "");
    const inContainer = access({}, container);
    expect(inContainer.status).toBe("ok");
    expect(inContainer.detail).toMatch(
      /^listening on 0\.0\.0\.0 with no token configured: every request needs ag's generated token in .*auth-token$/,
    );
    expect(access({ SVC_AUTH_TOKEN: "chosen-token" }).detail).toBe(
      "every request needs the token (from environment (SVC_AUTH_TOKEN))",
    );
  });

  test("allowUnauthenticatedNetwork beyond loopback is a loud warning; on loopback it changes nothing", () => {
    const open = access({ SVC_HOST: "0.0.0.0", SVC_ALLOW_UNAUTHENTICATED_NETWORK: "1" });
    expect(open.status).toBe("warn");
    expect(open.detail).toStartWith(
      "!!! SVC_ALLOW_UNAUTHENTICATED_NETWORK / allowUnauthenticatedNetwork is on: ag serves 0.0.0.0 WITHOUT authentication",
    );
    expect(access({ SVC_ALLOW_UNAUTHENTICATED_NETWORK: "1" }).status).toBe("ok");
  });
});

function readdirNames(dir: string): string[] {
  return [...new Bun.Glob("*").scanSync({ cwd: dir, dot: true })].sort();
}

describe("ag doctor", () => {
  const CLAUDE_VERIFIED = agentAdapters()
    .find((a) => a.name === "claude")!
    .verifiedVersions.at(-1)!;

  function deps(overrides: Partial<DoctorDeps> = {}): DoctorDeps {
    const cwd = tempDir();
    return {
      cwd,
      agents: agentAdapters().filter((a) => a.name === "claude"),
      loadConfig: () => loadConfig({ env: {}, cwd, home: tempDir(), containerRoot: tempDir() }),
      version: async (command) => (command === "tmux" ? "tmux 3.3a" : `${CLAUDE_VERIFIED} (Claude Code)`),
      health: async (loaded: LoadedConfig) => ({
        url: loaded.config.baseUrl,
        version: "1.0.0",
        status: "ok",
      }),
      ...overrides,
    };
  }

  test("all good: every check passes", async () => {
    const checks = await runDoctor(deps());
    expect(checks.map((c) => [c.name, c.status])).toEqual([
      ["starter files", "ok"],
      ["tmux", "ok"],
      ["agent claude", "ok"],
      ["config", "ok"],
      ["access", "ok"],
      ["server", "ok"],
    ]);
    expect(checks.find((c) => c.name === "access")!.detail).toStartWith("local tool on 127.0.0.1");
    expect(checks.find((c) => c.name === "agent claude")!.detail).toBe(
      `Claude Code ${CLAUDE_VERIFIED}: verified`,
    );
    expect(checks.find((c) => c.name === "server")!.detail).toBe("ag 1.0.0 at http://127.0.0.1:9100 (ok)");
    expect(doctorPassed(checks)).toBe(true);
  });

  test("an unverified version and flags its help lacks are warnings, not failures", async () => {
    const claude = agentAdapters().find((a) => a.name === "claude")!;
    const help =
      "Usage: claude [options]\n  --session-id <uuid>\n  --permission-mode <mode>\n  -r, --resume [value]\n";
    const checks = await runDoctor(
      deps({
        version: async (command) => (command === "tmux" ? "tmux 3.3a" : "9.9.9 (Claude Code)"),
        help: async (command) => (command === "claude" ? help : null),
      }),
    );
    const agent = checks.find((c) => c.name === "agent claude")!;
    expect(agent.status).toBe("warn");
    expect(agent.detail).toBe(
      `Claude Code 9.9.9: unverified (verified: ${claude.verifiedVersions.join(", ")}); its --help lacks --settings, --fork-session`,
    );
    expect(doctorPassed(checks)).toBe(true);
  });

  test("with PATH an empty directory, missing tmux and agent CLI name the command that installs them", async () => {
    const saved = process.env.PATH;
    process.env.PATH = tempDir("empty-path-");
    try {
      const checks = await runDoctor(deps({ version: programVersion }));
      const detail = (name: string) => checks.find((c) => c.name === name)!;
      expect(detail("tmux")).toMatchObject({ status: "fail", code: "TMUX_UNAVAILABLE" });
      // No package manager on that PATH either: Debian's command is the default on Linux.
      expect(detail("tmux").detail).toBe("tmux is not on PATH; install it: apt-get install -y tmux");
      expect(detail("agent claude")).toMatchObject({ status: "fail", code: "AGENT_UNAVAILABLE" });
      expect(detail("agent claude").detail).toBe(
        "claude is not on PATH; install Claude Code: npm install -g @anthropic-ai/claude-code (the default agent)",
      );
    } finally {
      process.env.PATH = saved;
    }
  });

  test("install commands follow the package manager found and whether sudo is needed", () => {
    const env = (managers: string[], isRoot = false) => ({
      platform: "linux" as const,
      which: (c: string) => (managers.includes(c) ? `/usr/bin/${c}` : null),
      isRoot,
    });
    expect(installCommand("tmux", env(["apt-get"]))).toBe("sudo apt-get install -y tmux");
    expect(installCommand("tmux", env(["apt-get"], true))).toBe("apt-get install -y tmux");
    expect(installCommand("chromium", env(["dnf"]))).toBe("sudo dnf install -y chromium");
    expect(installCommand("tmux", env(["brew"]))).toBe("brew install tmux");
    expect(installCommand("tmux", { ...env([]), platform: "darwin" })).toBe("brew install tmux");
    expect(agentInstallCommand("@anthropic-ai/claude-code")).toBe("npm install -g @anthropic-ai/claude-code");
  });

  test("a stopped server is a warning, not a failure", async () => {
    const checks = await runDoctor(
      deps({
        health: async () => {
          throw new AgError("SERVER_UNREACHABLE", "no ag server answers; start one with `ag`");
        },
      }),
    );
    const server = checks.find((c) => c.name === "server")!;
    expect(server.status).toBe("warn");
    expect(server.detail).toContain("start one with `ag`");
    expect(doctorPassed(checks)).toBe(true);
  });

  test("missing programs, a broken config and a broken starter file fail, with their codes", async () => {
    const d = deps({
      version: async () => null,
      loadConfig: () => {
        throw new AgError("CONFIG_INVALID", "invalid port");
      },
    });
    mkdirSync(join(d.cwd, ".claude", "agents"), { recursive: true });
    writeFileSync(join(d.cwd, ".claude", "agents", "x.md"), "---\nname: x\n---\n");
    const checks = await runDoctor(d);
    expect(checks.map((c) => [c.name, c.status, c.code])).toEqual([
      ["agent .claude/agents/x.md", "fail", "VALIDATION_ERROR"],
      ["tmux", "fail", "TMUX_UNAVAILABLE"],
      ["agent claude", "fail", "AGENT_UNAVAILABLE"],
      ["config", "fail", "CONFIG_INVALID"],
      ["server", "warn", undefined],
    ]);
    expect(doctorPassed(checks)).toBe(false);
  });

  test("config warnings and the sources of changed values are shown", async () => {
    const d = deps();
    mkdirSync(join(d.cwd, ".svc"));
    writeFileSync(configOf(d.cwd), "port: 9500\nprot: 1\n");
    const config = (await runDoctor(d)).find((c) => c.name === "config")!;
    expect(config.status).toBe("warn");
    expect(config.detail).toContain("port from ./.svc/config.yaml");
    expect(config.detail).toContain('unknown key "prot"');
  });
});
