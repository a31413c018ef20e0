/**
 * The agent CLIs the test suite drives, beyond the lock:
 *
 * - `agentTools`: CLIs that cannot be devDependencies (their npm package lists per-platform
 *   optional packages the registry here does not all have, so `npm install` cannot lock them and
 *   `npm ci` then refuses the lock): installed into `.tools/` (OpenCode).
 * - `agentVersions`: more pinned versions of an agent, verified beside its primary pin (the
 *   devDependency or `agentTools` entry): `{"@anthropic-ai/claude-code": ["2.1.328"]}`, each
 *   installed into `.tools/<package-id>@<version>/`, an npm prefix of its own.
 * - the newest version the registry serves of every agent package (`--newest`, the
 *   compatibility matrix, scripts/agent-matrix.ts): into `.tools/newest/<package-id>@<version>/`
 *   when it is none of the pins, recorded in `.tools/newest/newest.json`.
 *
 * `.tools/` is git-ignored. `npm test` installs the pins first (scripts/preflight.ts); an
 * installed pin is left alone, so a second run costs a file read per pin.
 *
 *   bun scripts/agent-tools.ts            installs the pins that are missing
 *   bun scripts/agent-tools.ts --newest   and the newest version of every agent
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { agentAdapters } from "../src/agents/index.ts";

export const REPO = resolve(import.meta.dir, "..");
export const TOOLS_DIR = join(REPO, ".tools");
export const NEWEST_DIR = join(TOOLS_DIR, "newest");
const NEWEST_RECORD = join(NEWEST_DIR, "newest.json");

interface Manifest {
  devDependencies?: Record<string, string>;
  agentTools?: Record<string, string>;
  agentVersions?: Record<string, string[]>;
  testTools?: Record<string, string>;
}

function manifest(packageJson = join(REPO, "package.json")): Manifest {
  return JSON.parse(readFileSync(packageJson, "utf8")) as Manifest;
}

/** Agent id → its CLI's npm package, as each adapter names it (claude → @anthropic-ai/claude-code). */
export function agentPackages(): Record<string, string> {
  return Object.fromEntries(agentAdapters().map((a) => [a.name, a.cli.package]));
}

/** package name → exact version, from package.json's `agentTools`. */
export function pinnedTools(packageJson = join(REPO, "package.json")): Record<string, string> {
  return manifest(packageJson).agentTools ?? {};
}

/** Agent package → its primary pin: the devDependency, else the `agentTools` entry. */
export function primaryPins(packageJson = join(REPO, "package.json")): Record<string, string> {
  const { devDependencies = {}, agentTools = {} } = manifest(packageJson);
  const pins: Record<string, string> = {};
  for (const name of Object.values(agentPackages())) {
    const version = devDependencies[name] ?? agentTools[name];
    if (version) pins[name] = version;
  }
  return pins;
}

/**
 * Tools only the tests drive (the `acpx` ACP client of tests/e2e/ag-acp.test.ts), pinned in
 * package.json's `testTools` and kept out of the lock as the agent CLIs outside it are: each in a
 * prefix of its own, `.tools/<package-id>@<version>/`.
 */
export function testTools(packageJson = join(REPO, "package.json")): Record<string, string> {
  return manifest(packageJson).testTools ?? {};
}

/** Agent package → its further pinned versions, from package.json's `agentVersions`. */
export function extraPins(packageJson = join(REPO, "package.json")): Record<string, string[]> {
  return manifest(packageJson).agentVersions ?? {};
}

/** `@anthropic-ai/claude-code` → `claude-code`: the folder name's first half. */
export function packageId(name: string): string {
  return name.replace(/^@[^/]+\//, "");
}

/** The npm prefix one extra version of a package is installed into. */
export function versionDir(name: string, version: string, root = TOOLS_DIR): string {
  return join(root, `${packageId(name)}@${version}`);
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

/**
 * `agentTools` into `.tools/`, each `agentVersions` and `testTools` entry into its own prefix:
 * what was installed.
 */
export function installPins(packageJson = join(REPO, "package.json")): string[] {
  const installed = installTools(pinnedTools(packageJson));
  for (const [name, versions] of Object.entries(extraPins(packageJson))) {
    for (const version of versions)
      installed.push(...installTools({ [name]: version }, versionDir(name, version)));
  }
  for (const [name, version] of Object.entries(testTools(packageJson)))
    installed.push(...installTools({ [name]: version }, versionDir(name, version)));
  return installed;
}

/** What the registry serves as `name`'s latest version (`npm view <name> version`). */
export function registryNewest(name: string): string {
  const npm = Bun.spawnSync(["npm", "view", name, "version"], {
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
  const version = npm.stdout.toString().trim();
  if (npm.exitCode !== 0 || !/^\d+\.\d+\.\d+/.test(version))
    throw new Error(`npm view ${name} version failed: ${npm.stderr.toString().trim() || version}`);
  return version;
}

export interface NewestVersion {
  package: string;
  /** The registry's latest. */
  newest: string;
  /** Pinned versions of the package (primary first). */
  pins: string[];
  /** Where it was installed; null when it is one of the pins (nothing to install). */
  dir: string | null;
}

/**
 * Asks the registry for the newest version of every agent package and installs each one that is
 * none of its pins into `.tools/newest/`; records them in `.tools/newest/newest.json` and removes
 * the newest versions of earlier runs (each Claude Code is ~200 MB).
 */
export function installNewest(packageJson = join(REPO, "package.json")): NewestVersion[] {
  const primary = primaryPins(packageJson);
  const extras = extraPins(packageJson);
  const found = Object.values(agentPackages()).map((name): NewestVersion => {
    const pins = [primary[name], ...(extras[name] ?? [])].filter((v): v is string => Boolean(v));
    const newest = registryNewest(name);
    const dir = pins.includes(newest) ? null : versionDir(name, newest, NEWEST_DIR);
    if (dir) installTools({ [name]: newest }, dir);
    return { package: name, newest, pins, dir };
  });
  const keep = new Set(found.flatMap((f) => (f.dir ? [f.dir] : [])));
  for (const entry of existsSync(NEWEST_DIR) ? readdirSync(NEWEST_DIR) : []) {
    const path = join(NEWEST_DIR, entry);
    if (path !== NEWEST_RECORD && !keep.has(path)) rmSync(path, { recursive: true, force: true });
  }
  mkdirSync(NEWEST_DIR, { recursive: true });
  const record = Object.fromEntries(found.filter((f) => f.dir).map((f) => [f.package, f.newest]));
  writeFileSync(NEWEST_RECORD, `${JSON.stringify(record, null, 2)}\n`);
  return found;
}

/** package → newest version installed by the last `installNewest` (none of them a pin). */
export function installedNewest(): Record<string, string> {
  try {
    return JSON.parse(readFileSync(NEWEST_RECORD, "utf8")) as Record<string, string>;
  } catch {
    return {};
  }
}

if (import.meta.main) {
  const installed = installPins();
  if (installed.length) console.error(`agent-tools: installed ${installed.join(", ")} into .tools/`);
  if (process.argv.includes("--newest")) {
    for (const found of installNewest()) {
      const where = found.dir ? `.tools/newest/${packageId(found.package)}@${found.newest}` : "a pin";
      console.error(`agent-tools: ${found.package} newest ${found.newest} (${where})`);
    }
  }
}
