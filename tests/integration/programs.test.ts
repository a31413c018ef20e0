import { describe, expect, test } from "bun:test";
import { mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { programVersion } from "../../src/shared/program.ts";
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
