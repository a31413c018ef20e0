import { describe, expect, test } from "bun:test";
import { readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { prepareClaudeLaunch, trustFolder } from "../../src/agents/claude/launch.ts";
import { launchTag, shellJoin, splitCommand } from "../../src/agents/launch-files.ts";
import { tempDir } from "../helpers/temp.ts";

function request(overrides: Partial<Parameters<typeof prepareClaudeLaunch>[0]> = {}) {
  const root = tempDir();
  return {
    sessionId: "0b5e55ed-0000-4000-8000-000000000001",
    workDir: join(root, "work"),
    permissionMode: "default",
    agentCommand: null,
    sessionDir: join(root, "state", "sessions", "s1"),
    hookUrl: "http://127.0.0.1:9100/v1/hooks/claude",
    hookSecret: "secret-xyz",
    env: {},
    ...overrides,
  };
}

const env = (home: string) => ({
  home,
  dataDir: null,
  trustWorkdir: true,
  selfCommand: ["/opt/ag/ag"],
  isRoot: false,
});

describe("launching Claude Code", () => {
  test("the command: session id, permission mode, per-session settings (0600)", async () => {
    const req = request();
    const home = tempDir();
    const plan = await prepareClaudeLaunch(req, env(home));
    const settingsFile = join(req.sessionDir, `settings-${launchTag("secret-xyz")}.json`);
    expect(plan.command).toEqual([
      "claude",
      "--session-id",
      req.sessionId,
      "--permission-mode",
      "default",
      "--settings",
      settingsFile,
    ]);
    expect(statSync(settingsFile).mode & 0o777).toBe(0o600);
    expect(statSync(join(req.sessionDir, `hook-secret-${launchTag("secret-xyz")}`)).mode & 0o777).toBe(0o600);
    expect(statSync(req.sessionDir).mode & 0o777).toBe(0o700);
    const settings = JSON.parse(readFileSync(settingsFile, "utf8"));
    expect(settings.hooks.Stop[0].hooks[0].url).toBe("http://127.0.0.1:9100/v1/hooks/claude/Stop");
    expect(settings.hooks.SessionStart[0].hooks[0].command).toStartWith("/opt/ag/ag hook SessionStart --url");
    expect(plan.env).toEqual({ SVC_SESSION_ID: req.sessionId });
    // The secret is in files only ag's user can read, never in argv or the environment.
    expect(JSON.stringify(plan)).not.toContain("secret-xyz");
  });

  test("an agentCommand override, a data dir, bypass mode as root", async () => {
    const req = request({ agentCommand: "claude --model 'opus 4'", permissionMode: "bypassPermissions" });
    const plan = await prepareClaudeLaunch(req, { ...env(tempDir()), dataDir: "/data/claude", isRoot: true });
    expect(plan.command.slice(0, 3)).toEqual(["claude", "--model", "opus 4"]);
    expect(plan.env.CLAUDE_CONFIG_DIR).toBe("/data/claude");
    expect(plan.env.IS_SANDBOX).toBe("1");
    const settings = JSON.parse(
      readFileSync(join(req.sessionDir, `settings-${launchTag("secret-xyz")}.json`), "utf8"),
    );
    expect(settings.skipDangerousModePermissionPrompt).toBe(true);
  });

  test("resume and fork", async () => {
    const req = request({ resume: { conversationId: "parent-id", fork: true } });
    const plan = await prepareClaudeLaunch(req, env(tempDir()));
    expect(plan.command.slice(0, 6)).toEqual([
      "claude",
      "--resume",
      "parent-id",
      "--fork-session",
      "--session-id",
      req.sessionId,
    ]);
  });

  test("trust off: no write, and a warning", async () => {
    const home = tempDir();
    const plan = await prepareClaudeLaunch(request(), { ...env(home), trustWorkdir: false });
    expect(plan.warnings[0]).toContain("trust");
    expect(() => statSync(join(home, ".claude.json"))).toThrow();
  });
});

describe("folder trust in the agent's own config", () => {
  test("adds the workDir and keeps every other key", () => {
    const file = join(tempDir(), ".claude.json");
    writeFileSync(
      file,
      JSON.stringify({ hasCompletedOnboarding: true, projects: { "/other": { allowedTools: ["x"] } } }),
    );
    trustFolder(file, "/work/repo");
    const config = JSON.parse(readFileSync(file, "utf8"));
    expect(config.hasCompletedOnboarding).toBe(true);
    expect(config.projects["/other"]).toEqual({ allowedTools: ["x"] });
    expect(config.projects["/work/repo"]).toEqual({ hasTrustDialogAccepted: true });
  });

  test("a trusted parent is enough; a sibling with a common prefix is not", () => {
    const file = join(tempDir(), ".claude.json");
    writeFileSync(file, JSON.stringify({ projects: { "/work": { hasTrustDialogAccepted: true } } }));
    trustFolder(file, "/work/repo/sub");
    expect(Object.keys(JSON.parse(readFileSync(file, "utf8")).projects)).toEqual(["/work"]);
    trustFolder(file, "/work2/repo");
    expect(Object.keys(JSON.parse(readFileSync(file, "utf8")).projects)).toEqual(["/work", "/work2/repo"]);
  });

  test("an unreadable config is left alone", () => {
    const file = join(tempDir(), ".claude.json");
    writeFileSync(file, "{broken");
    trustFolder(file, "/work");
    expect(readFileSync(file, "utf8")).toBe("{broken");
  });
});

describe("argv helpers", () => {
  test("splitCommand groups quotes", () => {
    expect(splitCommand(`claude  --model "a b" --x='' c`)).toEqual(["claude", "--model", "a b", "--x=", "c"]);
  });
  test("shellJoin quotes what a shell would split", () => {
    expect(shellJoin(["/opt/ag", "hook", "it's here", "a b"])).toBe(`/opt/ag hook 'it'\\''s here' 'a b'`);
  });
});
