import { describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createProgramFacts, programHelp, programVersion } from "../../src/shared/program.ts";
import { tempDir } from "../helpers/temp.ts";

// ag doctor's program versions, from the real programs (tmux, an npm-installed CLI): the rest of
// ag doctor is tested without running anything in tests/unit/init.test.ts.
describe("ag doctor", () => {
  test("program versions come from the real programs", async () => {
    expect(await programVersion("tmux", "-V")).toMatch(/^tmux \d/);
    expect(await programVersion("ag-no-such-program", "--version")).toBeNull();
  });

  test("an npm-installed CLI's version is read from its package's manifest, without running it", async () => {
    const root = tempDir();
    const pkg = join(root, "node_modules", "some-cli");
    mkdirSync(join(pkg, "bin"), { recursive: true });
    writeFileSync(join(pkg, "package.json"), JSON.stringify({ name: "some-cli", version: "4.5.6" }));
    // A program that would fail if it ran: the manifest answers first.
    writeFileSync(join(pkg, "bin", "cli.js"), "#!/bin/sh\nexit 1\n", { mode: 0o755 });
    const bin = join(root, "node_modules", ".bin");
    mkdirSync(bin);
    symlinkSync("../some-cli/bin/cli.js", join(bin, "some-cli"));
    const PATH = process.env.PATH;
    process.env.PATH = `${bin}:${PATH}`;
    try {
      expect(await programVersion("some-cli", "--version", "some-cli")).toBe("4.5.6");
      // Another package's manifest is not this CLI's: the program runs (and fails here): it is
      // there, its version untold.
      expect(await programVersion("some-cli", "--version", "other-cli")).toBe("");
    } finally {
      process.env.PATH = PATH;
    }
  });

  test("a platform package's binary on the PATH: its manifest answers for the CLI's package", async () => {
    const root = tempDir();
    const platform = `${process.platform}-${process.arch}`;
    // opencode-ai's binary, named directly (as `opencode-linux-x64/bin/opencode`), and Claude Code's.
    for (const [dir, name, program] of [
      [`opencode-${platform}`, `opencode-${platform}`, "opencode"],
      [`@anthropic-ai/claude-code-${platform}`, `@anthropic-ai/claude-code-${platform}`, "claude"],
    ] as const) {
      const pkg = join(root, "node_modules", dir);
      mkdirSync(join(pkg, "bin"), { recursive: true });
      writeFileSync(join(pkg, "package.json"), JSON.stringify({ name, version: "1.2.3" }));
      writeFileSync(join(pkg, "bin", program), "#!/bin/sh\nexit 1\n", { mode: 0o755 });
    }
    const PATH = `${join(root, "node_modules", `opencode-${platform}`, "bin")}:${join(root, "node_modules", `@anthropic-ai/claude-code-${platform}`, "bin")}`;
    expect(await programVersion("opencode", "--version", "opencode-ai", { path: PATH })).toBe("1.2.3");
    expect(await programVersion("claude", "--version", "@anthropic-ai/claude-code", { path: PATH })).toBe(
      "1.2.3",
    );
    // Another CLI's platform package is not this one's: it runs (and fails): there, version untold.
    expect(await programVersion("claude", "--version", "opencode-ai", { path: PATH })).toBe("");
  });
});

// A CLI asked for its help or version may start processes of its own (Gemini CLI relaunches
// itself under node): one left running once wrote into a test's HOME after it was removed.
describe("a program ag runs leaves nothing running", () => {
  /** A program that starts a child which, 1 s on, leaves a mark; it prints help after `ms`. */
  function leavingAChild(ms: number): { program: string; mark: string } {
    const root = tempDir();
    const mark = join(root, "mark");
    const program = join(root, "cli");
    const wait = (ms / 1000).toFixed(2);
    writeFileSync(program, `#!/bin/sh\n(sleep 1; touch '${mark}') &\nsleep ${wait}\necho usage\n`, {
      mode: 0o755,
    });
    return { program, mark };
  }

  test("past its time limit: ended with the child it started", async () => {
    const { program, mark } = leavingAChild(30_000);
    expect(await programHelp(program, { timeoutMs: 200 })).toBeNull();
    await Bun.sleep(1500);
    expect(existsSync(mark)).toBe(false);
  });

  test("answering in time: the child it left behind is ended too", async () => {
    const { program, mark } = leavingAChild(0);
    expect(await programHelp(program, { timeoutMs: 10_000 })).toBe("usage\n");
    await Bun.sleep(1500);
    expect(existsSync(mark)).toBe(false);
  });

  test("ag stopping ends a probe under way, and asks none after", async () => {
    const { program, mark } = leavingAChild(30_000);
    const facts = createProgramFacts();
    const asked = facts.help(program, { timeoutMs: 60_000 });
    await Bun.sleep(200);
    facts.stop();
    expect(await asked).toBeNull();
    await Bun.sleep(1500);
    expect(existsSync(mark)).toBe(false);
    expect(await facts.help(leavingAChild(0).program)).toBeNull();
  });
});
