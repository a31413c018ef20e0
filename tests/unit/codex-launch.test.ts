import { describe, expect, test } from "bun:test";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import type { LaunchRequest } from "../../src/agents/agent.ts";
import { createCodexAdapter } from "../../src/agents/codex/adapter.ts";
import { CODEX_MODES, PERMISSION_FLAGS, prepareCodexLaunch } from "../../src/agents/codex/launch.ts";
import { launchTag } from "../../src/agents/launch-files.ts";
import { PERMISSION_MODES } from "../../src/agents/vocabulary.ts";
import { tempDir } from "../helpers/temp.ts";

function request(overrides: Partial<LaunchRequest> = {}): LaunchRequest {
  const root = tempDir();
  return {
    sessionId: "0b5e55ed-0000-4000-8000-000000000002",
    workDir: join(root, "work"),
    permissionMode: "default",
    agentCommand: null,
    sessionDir: join(root, "state", "sessions", "s2"),
    hookUrl: "http://127.0.0.1:9100/v1/hooks/codex",
    hookSecret: "secret-abc",
    env: {},
    ...overrides,
  };
}

const env = (home: string, trustWorkdir = true) => ({
  home,
  dataDir: null,
  trustWorkdir,
  selfCommand: ["/opt/ag/ag"],
  isRoot: false,
});

/** The values of every `-c` override. */
const overrides = (command: string[]) => command.flatMap((a, i) => (command[i - 1] === "-c" ? [a] : []));

describe("launching Codex CLI", () => {
  test("never the daemon, hooks trusted as given, the mode's flags, hooks and trust on the command line", async () => {
    const req = request();
    const home = tempDir();
    const plan = await prepareCodexLaunch(req, env(home));
    expect(plan.command.slice(0, 7)).toEqual([
      "codex",
      "--no-daemon",
      "--dangerously-bypass-hook-trust",
      "--sandbox",
      "read-only",
      "--ask-for-approval",
      "on-request",
    ]);
    const secretFile = join(req.sessionDir, `hook-secret-${launchTag("secret-abc")}`);
    const values = overrides(plan.command);
    expect(values).toContain(
      `hooks.Stop=[{hooks=[{type="command",command="/opt/ag/ag hook Stop --url http://127.0.0.1:9100/v1/hooks/codex/Stop --secret-file ${secretFile}",timeout=10}]}]`,
    );
    expect(values.filter((v) => v.startsWith("hooks."))).toHaveLength(8);
    expect(values).toContain(`projects={"${req.workDir}"={trust_level="trusted"}}`);
    expect(plan.env).toEqual({ SVC_SESSION_ID: req.sessionId });
    expect(plan.warnings).toEqual([]);
    // The secret is in a file only ag's user reads, never in argv or the environment.
    expect(statSync(secretFile).mode & 0o777).toBe(0o600);
    expect(readFileSync(secretFile, "utf8")).toBe("secret-abc");
    expect(statSync(req.sessionDir).mode & 0o777).toBe(0o700);
    expect(JSON.stringify(plan)).not.toContain("secret-abc");
    // Nothing of the user's Codex home is written.
    expect(readdirSync(home)).toEqual([]);
  });

  test("every neutral mode has its flags; auto leaves the approval hook to Codex's reviewer", async () => {
    expect([...CODEX_MODES].sort()).toEqual([...PERMISSION_MODES].sort());
    expect(PERMISSION_FLAGS.bypassPermissions).toEqual(["--dangerously-bypass-approvals-and-sandbox"]);
    expect(PERMISSION_FLAGS.dontAsk).toEqual(["--sandbox", "workspace-write", "--ask-for-approval", "never"]);
    const auto = await prepareCodexLaunch(request({ permissionMode: "auto" }), env(tempDir()));
    expect(auto.command).toContain("--approve-for-me");
    expect(auto.command).not.toContain("--sandbox");
    const hooks = overrides(auto.command).filter((v) => v.startsWith("hooks."));
    expect(hooks.some((v) => v.startsWith("hooks.PermissionRequest="))).toBe(false);
    expect(hooks).toHaveLength(7);
  });

  test("a workDir ag does not trust: no trust override, a warning instead", async () => {
    const plan = await prepareCodexLaunch(request(), env(tempDir(), false));
    expect(overrides(plan.command).some((v) => v.startsWith("projects="))).toBe(false);
    expect(plan.warnings).toEqual([
      "folder trust is not pre-accepted: the trust dialog is a permission prompt of kind trust",
    ]);
  });

  test("a folder with quotes and dots is one TOML key", async () => {
    const req = request();
    const plan = await prepareCodexLaunch(
      { ...req, workDir: `${req.workDir}/my.project "x"` },
      env(tempDir()),
    );
    expect(overrides(plan.command)).toContain(
      `projects={"${req.workDir}/my.project \\"x\\""={trust_level="trusted"}}`,
    );
  });

  test("resume and fork name the thread of the rollout ag recorded; without one there is nothing to resume", async () => {
    const transcriptPath =
      "/h/.codex/sessions/2026/11/24/rollout-2026-11-24T17-45-05-01a20ea9-4c77-7da3-b65f-010e1a946965.jsonl";
    const resume = await prepareCodexLaunch(
      request({ resume: { conversationId: "s1", fork: false, transcriptPath } }),
      env(tempDir()),
    );
    expect(resume.command.slice(-2)).toEqual(["resume", "01a20ea9-4c77-7da3-b65f-010e1a946965"]);
    const fork = await prepareCodexLaunch(
      request({ resume: { conversationId: "s1", fork: true, transcriptPath } }),
      env(tempDir()),
    );
    expect(fork.command.slice(-2)).toEqual(["fork", "01a20ea9-4c77-7da3-b65f-010e1a946965"]);
    await expect(
      prepareCodexLaunch(request({ resume: { conversationId: "s1", fork: false } }), env(tempDir())),
    ).rejects.toThrow("no Codex conversation is known for session s1");
  });

  test("an agentCommand replaces the program, its words kept; ag's flags follow", async () => {
    const plan = await prepareCodexLaunch(request({ agentCommand: "codex -m 'gpt-5.5'" }), env(tempDir()));
    expect(plan.command.slice(0, 4)).toEqual(["codex", "-m", "gpt-5.5", "--no-daemon"]);
  });
});

describe("the adapter's keys", () => {
  const keys = createCodexAdapter(env("/h")).keys;

  test("approve with y, refuse with Escape; interrupt with Escape, never C-c (it quits at idle)", () => {
    expect(keys.approve({ kind: "tool" })).toEqual(["y"]);
    expect(keys.reject({ kind: "tool" })).toEqual(["Escape"]);
    expect(keys.interrupt).toEqual(["Escape"]);
    expect([...keys.interrupt, ...keys.escape, ...keys.clearInput, ...keys.submit]).not.toContain("C-c");
  });

  test("each start-up dialog its own keys; refusing folder trust quits, through Codex's task list", () => {
    expect(keys.approve({ kind: "trust", dialog: "folder-trust" })).toEqual(["Enter"]);
    expect(keys.reject({ kind: "trust", dialog: "folder-trust" })).toEqual(["C-c", "C-c"]);
    expect(keys.approve({ kind: "trust", dialog: "hooks-review" })).toEqual(["2"]);
    expect(keys.reject({ kind: "trust", dialog: "hooks-review" })).toEqual(["3"]);
    expect(keys.reject({ kind: "trust", dialog: "model-upgrade" })).toEqual(["2"]);
  });

  test("a question: an option by its digit; own words in the notes of the row after the options", () => {
    const pending = {
      id: "p1",
      kind: "question" as const,
      detail: "color?",
      options: [
        { index: 1, label: "Red" },
        { index: 2, label: "Blue" },
      ],
    };
    expect(keys.answer(pending, { option: 2 })).toEqual([{ keys: ["2"] }]);
    expect(keys.answer(pending, { text: "Green" })).toEqual([
      { keys: ["Down"] },
      { keys: ["Down"] },
      { keys: ["Tab"] },
      { text: "Green" },
      { keys: ["Enter"] },
    ]);
  });

  test("clearing the composer empties every line of a multi-line input", () => {
    expect(keys.clearInput.slice(0, 2)).toEqual(["C-u", "BSpace"]);
    expect(keys.clearInput.filter((k) => k === "C-u").length).toBeGreaterThanOrEqual(10);
  });
});

describe("what Codex recorded as submitted", () => {
  const adapter = createCodexAdapter(env("/h"));
  test("is the text typed, its ends trimmed; whitespace inside counts", () => {
    expect(adapter.isSubmission("  lead\n", "lead")).toBe(true);
    expect(adapter.isSubmission("tab\there  and  spaces \n\nend  ", "tab\there  and  spaces \n\nend")).toBe(
      true,
    );
    expect(adapter.isSubmission("a  b", "a b")).toBe(false);
  });

  test("shell and built-in commands are taken when the composer empties (no hook, no prompt line)", () => {
    expect(adapter.recordsLate("!ls")).toBe(true);
    expect(adapter.recordsLate("/status")).toBe(true);
    expect(adapter.recordsLate("say hello")).toBe(false);
  });
});
