import { describe, expect, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { installedVersion, missingTools, pinnedTools } from "../../scripts/agent-tools.ts";
import { tempDir } from "../helpers/temp.ts";

/** The agent CLIs installed outside the lock (scripts/agent-tools.ts): what is pinned, what is missing. */
describe("agent tools", () => {
  test("the pins come from package.json's agentTools, OpenCode among them", () => {
    expect(pinnedTools()).toMatchObject({ "opencode-ai": expect.stringMatching(/^\d+\.\d+\.\d+$/) });
    const bare = join(tempDir(), "package.json");
    writeFileSync(bare, "{}");
    expect(pinnedTools(bare)).toEqual({});
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
});
