import { Database } from "bun:sqlite";
import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { TOOLS_DIR } from "../../../scripts/agent-tools.ts";
import type { AgentSeed } from "./index.ts";

/** The mock's models as OpenCode's model list shows them (a provider of its own, "mock"). */
const MODELS = {
  "claude-sonnet-4-5": { name: "Mock Sonnet", tool_call: true, limit: { context: 200_000, output: 8192 } },
  "claude-haiku-4-5": { name: "Mock Haiku", tool_call: true, limit: { context: 200_000, output: 8192 } },
};

/**
 * OpenCode (opencode-ai, pinned 1.18.33) in a test world: its user config names a provider of
 * our own on the bundled `@ai-sdk/anthropic` (no package to download) pointing at the mock, its
 * models, no auto-update and no sharing. OpenCode would install its plugin package from the npm
 * registry into its config dir on first start: an empty node_modules and a lock file naming it
 * keep it offline (as ag does for each session's own config dir). No models.dev fetch either.
 */
export const opencodeSeed: AgentSeed = {
  binaries: (modules) => ({ opencode: opencodeBinary(modules) }),
  seed(home, mockUrl) {
    const dir = join(home, ".config", "opencode");
    mkdirSync(join(dir, "node_modules"), { recursive: true });
    const config = {
      $schema: "https://opencode.ai/config.json",
      autoupdate: false,
      share: "disabled",
      model: "mock/claude-sonnet-4-5",
      small_model: "mock/claude-haiku-4-5",
      provider: {
        mock: {
          name: "Mock Anthropic",
          npm: "@ai-sdk/anthropic",
          options: { baseURL: `${mockUrl}/v1`, apiKey: "mock-key" },
          models: MODELS,
        },
      },
    };
    writeFileSync(join(dir, "opencode.json"), JSON.stringify(config, null, 2));
    const installed = { packages: { "": { dependencies: { "@opencode-ai/plugin": "*" } } } };
    writeFileSync(join(dir, "package-lock.json"), JSON.stringify(installed));
    return {
      OPENCODE_DISABLE_MODELS_FETCH: "1",
      OPENCODE_DISABLE_AUTOUPDATE: "1",
      OPENCODE_DISABLE_SHARE: "1",
    };
  },
};

/**
 * The native OpenCode binary as scripts/agent-tools.ts installs it into .tools/ (outside the
 * lock: see there), or into another version's `modules`: the npm package's own `opencode.exe`
 * first (its postinstall links the platform binary there), as a user's `npm i -g opencode-ai`
 * runs it. ag then reads its version from opencode-ai's package.json; from the platform
 * package's binary it would run `opencode --version` before the world's first launch (a second
 * of CPU or more, seconds on a loaded machine: docs/agents.md). Else the platform package's
 * binary, else its launcher. $OPENCODE_BIN replaces the pinned one.
 */
export function opencodeBinary(modules?: string): string {
  const pinned = modules === undefined;
  modules ??= join(TOOLS_DIR, "node_modules");
  const candidates = [
    pinned ? process.env.OPENCODE_BIN : undefined,
    join(modules, "opencode-ai", "bin", "opencode.exe"),
    join(modules, `opencode-${process.platform}-${process.arch}`, "bin", "opencode"),
    join(modules, `opencode-${process.platform}-${process.arch}-baseline`, "bin", "opencode"),
    join(modules, ".bin", "opencode"),
  ];
  for (const path of candidates) if (path && existsSync(path) && statSync(path).size > 100_000) return path;
  throw new Error(
    `the OpenCode binary is missing in ${modules}: bun scripts/agent-tools.ts (or set OPENCODE_BIN)`,
  );
}

/**
 * OpenCode's own store in `home` as its CLI leaves it: the captured database of two conversations
 * (tests/fixtures/opencode-history), made from its SQL. Returns the database's path.
 */
export function writeOpenCodeStore(home: string): string {
  const dir = join(home, ".local", "share", "opencode");
  mkdirSync(dir, { recursive: true });
  const path = join(dir, "opencode.db");
  const db = new Database(path, { create: true });
  db.exec(
    readFileSync(
      join(import.meta.dir, "..", "..", "fixtures", "opencode-history", "opencode-1.18.33.sql"),
      "utf8",
    ),
  );
  db.close();
  return path;
}
