/**
 * Agent CLIs the test suite drives that cannot be devDependencies: their npm package lists
 * per-platform optional packages the registry here does not all have, so `npm install` cannot
 * lock them and `npm ci` then refuses the lock. They are pinned in package.json's `agentTools`
 * and installed here, outside the lock, into `.tools/` (git-ignored): `npm test` runs this first
 * (scripts/preflight.ts). An installed pin is left alone, so a second run costs one file read.
 *
 *   bun scripts/agent-tools.ts        installs what is missing, prints where each one is
 */
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";

export const REPO = resolve(import.meta.dir, "..");
export const TOOLS_DIR = join(REPO, ".tools");

/** package name → exact version, from package.json's `agentTools`. */
export function pinnedTools(packageJson = join(REPO, "package.json")): Record<string, string> {
  const manifest = JSON.parse(readFileSync(packageJson, "utf8")) as { agentTools?: Record<string, string> };
  return manifest.agentTools ?? {};
}

/** The version of `name` installed under `dir`, or null. */
export function installedVersion(dir: string, name: string): string | null {
  try {
    const manifest = JSON.parse(readFileSync(join(dir, "node_modules", name, "package.json"), "utf8"));
    return typeof manifest.version === "string" ? manifest.version : null;
  } catch {
    return null;
  }
}

/** The packages whose pinned version is not the installed one, as `name@version`. */
export function missingTools(pins: Record<string, string>, dir = TOOLS_DIR): string[] {
  return Object.entries(pins)
    .filter(([name, version]) => installedVersion(dir, name) !== version)
    .map(([name, version]) => `${name}@${version}`);
}

/**
 * Installs the pins into `dir` with npm, from a manifest of its own there that lists them (so
 * npm never climbs up to the repository's package.json, and a later install never prunes one
 * installed before); their optional platform packages are resolved for this machine only.
 * Throws with npm's output when npm fails.
 */
export function installTools(pins: Record<string, string>, dir = TOOLS_DIR): string[] {
  const missing = missingTools(pins, dir);
  if (missing.length === 0) return [];
  mkdirSync(dir, { recursive: true });
  writeFileSync(
    join(dir, "package.json"),
    `${JSON.stringify({ private: true, dependencies: pins }, null, 2)}\n`,
  );
  const npm = Bun.spawnSync(["npm", "install", "--no-audit", "--no-fund", "--prefix", dir], {
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
  if (npm.exitCode !== 0)
    throw new Error(
      `npm install ${missing.join(" ")} failed:\n${npm.stderr.toString()}${npm.stdout.toString()}`,
    );
  const still = missingTools(pins, dir);
  if (still.length) throw new Error(`npm install left ${still.join(", ")} missing`);
  return missing;
}

if (import.meta.main) {
  const installed = installTools(pinnedTools());
  if (installed.length) console.error(`agent-tools: installed ${installed.join(", ")} into .tools/`);
}
