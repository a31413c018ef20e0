import { describe, expect, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import {
  agentPackages,
  extraPins,
  installedVersion,
  missingTools,
  packageId,
  pinnedTools,
  primaryPins,
  TOOLS_DIR,
  testTools,
  versionDir,
} from "../../scripts/agent-tools.ts";
import { agentVersions, matrixMode } from "../helpers/agent-versions.ts";
import { tempDir } from "../helpers/temp.ts";

/** The agent CLIs installed outside the lock (scripts/agent-tools.ts): what is pinned, what is missing. */
describe("agent tools", () => {
  test("the pins come from package.json's agentTools, OpenCode among them", () => {
    expect(pinnedTools()).toMatchObject({ "opencode-ai": expect.stringMatching(/^\d+\.\d+\.\d+$/) });
    const bare = join(tempDir(), "package.json");
    writeFileSync(bare, "{}");
    expect(pinnedTools(bare)).toEqual({});
  });

  test("the test-only tools come from package.json's testTools (acpx), each into a prefix of its own", () => {
    const version = testTools().acpx;
    expect(version).toMatch(/^\d+\.\d+\.\d+$/);
    expect(versionDir("acpx", version!)).toBe(join(TOOLS_DIR, `acpx@${version}`));
    const bare = join(tempDir(), "package.json");
    writeFileSync(bare, "{}");
    expect(testTools(bare)).toEqual({});
  });

  test("a pin is missing until that very version is installed", () => {
    const dir = tempDir();
    const pins = { "some-cli": "1.2.3" };
    expect(missingTools(pins, dir)).toEqual(["some-cli@1.2.3"]);
    mkdirSync(join(dir, "node_modules", "some-cli"), { recursive: true });
    writeFileSync(join(dir, "node_modules", "some-cli", "package.json"), '{"version":"1.2.2"}');
    expect(installedVersion(dir, "some-cli")).toBe("1.2.2");
    expect(missingTools(pins, dir)).toEqual(["some-cli@1.2.3"]);
    writeFileSync(join(dir, "node_modules", "some-cli", "package.json"), '{"version":"1.2.3"}');
    expect(missingTools(pins, dir)).toEqual([]);
  });

  test("each agent's primary pin is its devDependency or agentTools entry; more pins come from agentVersions", () => {
    const manifest = join(tempDir(), "package.json");
    writeFileSync(
      manifest,
      JSON.stringify({
        devDependencies: { "@anthropic-ai/claude-code": "2.1.197", typescript: "7.0.2" },
        agentTools: { "opencode-ai": "1.18.33" },
        agentVersions: { "@anthropic-ai/claude-code": ["2.1.328"] },
      }),
    );
    expect(primaryPins(manifest)).toEqual({
      "@anthropic-ai/claude-code": "2.1.197",
      "opencode-ai": "1.18.33",
    });
    expect(extraPins(manifest)).toEqual({ "@anthropic-ai/claude-code": ["2.1.328"] });
    expect(Object.keys(agentPackages())).toEqual(["claude", "codex", "gemini", "opencode"]);
  });

  test("another version lives in a prefix of its own, named by the package without its scope", () => {
    expect(packageId("@anthropic-ai/claude-code")).toBe("claude-code");
    expect(packageId("opencode-ai")).toBe("opencode-ai");
    expect(versionDir("@openai/codex", "0.171.0")).toBe(join(TOOLS_DIR, "codex@0.171.0"));
  });

  test("the versions under test: every agent's pins always, the newest only when the matrix asks", () => {
    expect(matrixMode({})).toBe("pins");
    expect(matrixMode({ AG_AGENT_MATRIX: "newest" })).toBe("newest");
    expect(() => matrixMode({ AG_AGENT_MATRIX: "latest" })).toThrow("AG_AGENT_MATRIX=latest");
    const pins = agentVersions("pins");
    expect(new Set(pins.map((v) => v.agent))).toEqual(new Set(["claude", "codex", "gemini", "opencode"]));
    expect(pins.filter((v) => v.kind === "pin")).toHaveLength(4);
    expect(pins.some((v) => v.kind === "newest")).toBe(false);
    for (const [name, versions] of Object.entries(extraPins()))
      for (const version of versions)
        expect(pins).toContainEqual(expect.objectContaining({ package: name, version, kind: "extra" }));
    expect(agentVersions("newest-only").every((v) => v.kind === "newest")).toBe(true);
  });
});
