import { beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { claudeBinary } from "../helpers/agent-home.ts";
import { agEnv, compiledBinary, runAg, startAg } from "../helpers/binary.ts";
import { tempDir } from "../helpers/temp.ts";

let ag: string;
beforeAll(async () => {
  ag = await compiledBinary();
}, 60_000);

/**
 * A PATH with the real tmux and the real agent CLI (as `claude`) and nothing from the developer's
 * own PATH, so `ag doctor` sees the same programs on every machine.
 */
function doctorPath(): string {
  const bin = tempDir("ag-doctor-bin-");
  symlinkSync(claudeBinary(), join(bin, "claude"));
  const tmux = Bun.which("tmux");
  if (!tmux) throw new Error("tmux is required by the e2e tests");
  symlinkSync(tmux, join(bin, "tmux"));
  return bin;
}

describe("ag init", () => {
  test("creates .svc/config.yaml, keeps it on a second run, replaces it with --force", async () => {
    const cwd = tempDir();
    const env = agEnv();
    const first = await runAg(ag, ["init", "--yes"], { cwd, env });
    expect(first).toMatchObject({ exitCode: 0, stderr: "" });
    expect(first.stdout).toBe("created .svc/config.yaml\n");
    const path = join(cwd, ".svc", "config.yaml");
    expect(readFileSync(path, "utf8")).toContain("# permissionMode:");

    writeFileSync(path, "port: 9444\n");
    const again = await runAg(ag, ["init"], { cwd, env }); // no terminal: nobody to ask, so kept
    expect(again.exitCode).toBe(0);
    expect(again.stdout).toContain("kept existing .svc/config.yaml");
    expect(again.stdout).toContain("--force");
    expect(readFileSync(path, "utf8")).toBe("port: 9444\n");

    const forced = await runAg(ag, ["init", "-f"], { cwd, env });
    expect(forced).toMatchObject({ exitCode: 0, stdout: "overwrote .svc/config.yaml\n" });
    expect(readFileSync(path, "utf8")).not.toContain("9444");
  });

  test("--list-templates names the four starters; --from-template writes one", async () => {
    const list = await runAg(ag, ["init", "--list-templates"]);
    expect(list.exitCode).toBe(0);
    for (const name of ["code-reviewer", "ci-runner", "pr-reviewer", "docs-writer"]) {
      expect(list.stdout).toContain(name);
    }
    const cwd = tempDir();
    const made = await runAg(ag, ["init", "--yes", "--from-template", "code-reviewer"], { cwd });
    expect(made.exitCode).toBe(0);
    expect(made.stdout).toContain("created .claude/agents/code-reviewer.md");
    expect(readFileSync(join(cwd, ".claude", "agents", "code-reviewer.md"), "utf8")).toStartWith(
      "---\nname: code-reviewer\n",
    );
    const unknown = await runAg(ag, ["init", "--from-template", "nope"], { cwd });
    expect(unknown.exitCode).toBe(1);
    expect(unknown.stderr).toContain("[USAGE_ERROR]");
  });
});

describe("ag doctor", () => {
  test("passes with valid starter files and a stopped server (a warning that says how to start it)", async () => {
    const cwd = tempDir();
    const env = agEnv({ PATH: doctorPath() });
    for (const t of ["code-reviewer", "ci-runner", "pr-reviewer", "docs-writer"]) {
      expect((await runAg(ag, ["init", "--yes", "--from-template", t], { cwd, env })).exitCode).toBe(0);
    }
    const result = await runAg(ag, ["doctor", "--port", "1"], { cwd, env });
    expect(result.stderr).toBe("");
    expect(result.exitCode).toBe(0);
    const lines = result.stdout.trim().split("\n");
    expect(lines).toContain("✓ agent .claude/agents/code-reviewer.md: valid");
    expect(lines).toContain("✓ skill .claude/skills/docs-writer/SKILL.md: valid");
    expect(lines.find((l) => l.startsWith("✓ tmux: "))).toMatch(/tmux \d/);
    expect(lines.find((l) => l.startsWith("✓ agent claude: "))).toContain("Claude Code ");
    expect(lines.find((l) => l.startsWith("✗ server: warning: "))).toContain("start one with `ag`");
  });

  test("--json reports each check; a broken file fails with exit 1", async () => {
    const cwd = tempDir();
    const env = agEnv({ PATH: doctorPath() });
    mkdirSync(join(cwd, ".claude", "skills", "helper"), { recursive: true });
    writeFileSync(join(cwd, ".claude", "skills", "helper", "SKILL.md"), "---\nname: helper\n---\nHelp.\n");
    const result = await runAg(ag, ["doctor", "--json", "--port", "1"], { cwd, env });
    expect(result.exitCode).toBe(1);
    expect(result.stderr).toBe("ag: 1 check failed [VALIDATION_ERROR]\n");
    const report = JSON.parse(result.stdout);
    expect(report.ok).toBe(false);
    expect(report.checks[0]).toEqual({
      name: "skill .claude/skills/helper/SKILL.md",
      status: "fail",
      detail: 'front matter lacks "description"',
      code: "VALIDATION_ERROR",
    });
  });

  test("sees a running server", async () => {
    const env = agEnv({ PATH: doctorPath() });
    const server = await startAg(ag, undefined, { env });
    try {
      const result = await runAg(ag, ["doctor"], { env });
      expect(result.exitCode).toBe(0);
      expect(result.stdout).toContain(`✓ server: ag `);
      expect(result.stdout).toContain(`at ${server.url}`);
    } finally {
      await server.stop();
    }
  });
});

describe("ag auth migrate", () => {
  test("moves the token to <stateDir>/auth-token, which the server and the CLI then use", async () => {
    const cwd = tempDir();
    const env = agEnv();
    mkdirSync(join(cwd, ".svc"));
    const config = join(cwd, ".svc", "config.yaml");
    writeFileSync(config, "# team settings\nclientAuthToken: e2e-token-42\nlogLevel: info\n");

    const moved = await runAg(ag, ["auth", "migrate"], { cwd, env });
    expect(moved.stderr).toBe("");
    expect(moved.exitCode).toBe(0);
    const tokenFile = join(env.SVC_STATE_DIR!, "auth-token");
    expect(moved.stdout).toBe(`moved clientAuthToken from .svc/config.yaml to ${tokenFile} (mode 0600)\n`);
    expect(readFileSync(tokenFile, "utf8")).toBe("e2e-token-42\n");
    expect(statSync(tokenFile).mode & 0o777).toBe(0o600);
    expect(readFileSync(config, "utf8")).toBe("# team settings\nlogLevel: info\n");

    const again = await runAg(ag, ["auth", "migrate"], { cwd, env });
    expect(again).toMatchObject({ exitCode: 0, stdout: `already migrated: the token is in ${tokenFile}\n` });

    // Started elsewhere, the server still finds the token in its state directory.
    const server = await startAg(ag, undefined, { env });
    try {
      expect((await fetch(`${server.url}/v1/sessions`)).status).toBe(401);
      const authorized = await fetch(`${server.url}/v1/sessions`, {
        headers: { authorization: "Bearer e2e-token-42" },
      });
      expect(authorized.status).toBe(200);
      const status = await runAg(ag, ["status", "--json"], { cwd, env });
      expect(status.stderr).toBe("");
      expect(status.exitCode).toBe(0);
    } finally {
      await server.stop();
    }
  });

  test("a different token already in the file is refused unless --force", async () => {
    const cwd = tempDir();
    const env = agEnv();
    mkdirSync(join(cwd, ".svc"));
    writeFileSync(join(cwd, ".svc", "config.yaml"), "clientAuthToken: newer\n");
    mkdirSync(env.SVC_STATE_DIR!, { recursive: true, mode: 0o700 });
    writeFileSync(join(env.SVC_STATE_DIR!, "auth-token"), "older\n", { mode: 0o600 });
    const refused = await runAg(ag, ["auth", "migrate"], { cwd, env });
    expect(refused.exitCode).toBe(1);
    expect(refused.stderr).toContain("already holds a different token");
    expect(refused.stderr).toEndWith("[CONFLICT]\n");
    const forced = await runAg(ag, ["auth", "migrate", "--force"], { cwd, env });
    expect(forced.exitCode).toBe(0);
    expect(readFileSync(join(env.SVC_STATE_DIR!, "auth-token"), "utf8")).toBe("newer\n");
    const unknown = await runAg(ag, ["auth", "rotate"], { cwd, env });
    expect(unknown.exitCode).toBe(1);
    expect(unknown.stderr).toContain("[USAGE_ERROR]");
  });
});
